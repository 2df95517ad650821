/* SPDX-License-Identifier: MIT */
/*
 * The unwind rule of a code address, from the call frame information of
 * the module that holds it: its .eh_frame_hdr's table finds the FDE, and
 * the CIE's and the FDE's instructions, run up to the address, give the
 * row, boiled down to a rule (unwind_internal.h) or RULE_FALLBACK.  Asked
 * on a rule cache miss only (unwind.c, lookup_rule): out of the walk's
 * file, which stays small and hot.  Nothing here allocates.
 */
#include <elf.h>
#include <link.h>
#include <string.h>

#include "unwind_internal.h"

/* ------------------------------------------------------ DWARF decoding */

#define REG_RBP 6
#define REG_RSP 7
#define REG_RA 16

#define DW_EH_PE_absptr 0x00
#define DW_EH_PE_uleb128 0x01
#define DW_EH_PE_udata2 0x02
#define DW_EH_PE_udata4 0x03
#define DW_EH_PE_udata8 0x04
#define DW_EH_PE_sleb128 0x09
#define DW_EH_PE_sdata2 0x0a
#define DW_EH_PE_sdata4 0x0b
#define DW_EH_PE_sdata8 0x0c
#define DW_EH_PE_pcrel 0x10
#define DW_EH_PE_datarel 0x30
#define DW_EH_PE_indirect 0x80
#define DW_EH_PE_omit 0xff

struct cursor {
	const uint8_t *p, *end;
	bool bad;
};

static uint64_t rd_uleb(struct cursor *c)
{
	uint64_t v = 0;
	unsigned shift = 0;

	while (c->p < c->end) {
		uint8_t b = *c->p++;

		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80))
			return v;
	}
	c->bad = true;
	return 0;
}

static int64_t rd_sleb(struct cursor *c)
{
	int64_t v = 0;
	unsigned shift = 0;
	uint8_t b = 0;

	while (c->p < c->end) {
		b = *c->p++;
		if (shift < 64)
			v |= (int64_t)((uint64_t)(b & 0x7f) << shift);
		shift += 7;
		if (!(b & 0x80)) {
			if (shift < 64 && (b & 0x40))
				v |= -((int64_t)1 << shift);
			return v;
		}
	}
	c->bad = true;
	return 0;
}

static uint64_t rd_fixed(struct cursor *c, unsigned n)
{
	uint64_t v = 0;

	if ((size_t)(c->end - c->p) < n) {
		c->bad = true;
		return 0;
	}
	memcpy(&v, c->p, n);
	c->p += n;
	return v;
}

/* Reads a pointer in DW_EH_PE encoding `enc`; datarel is relative to `data`. */
static uint64_t rd_encoded(struct cursor *c, uint8_t enc, uint64_t data)
{
	uint64_t pos = (uint64_t)(uintptr_t)c->p, v;

	if (enc == DW_EH_PE_omit)
		return 0;
	switch (enc & 0x0f) {
	case DW_EH_PE_absptr: v = rd_fixed(c, 8); break;
	case DW_EH_PE_uleb128: v = rd_uleb(c); break;
	case DW_EH_PE_udata2: v = rd_fixed(c, 2); break;
	case DW_EH_PE_udata4: v = rd_fixed(c, 4); break;
	case DW_EH_PE_udata8: v = rd_fixed(c, 8); break;
	case DW_EH_PE_sleb128: v = (uint64_t)rd_sleb(c); break;
	case DW_EH_PE_sdata2: v = (uint64_t)(int64_t)(int16_t)rd_fixed(c, 2); break;
	case DW_EH_PE_sdata4: v = (uint64_t)(int64_t)(int32_t)rd_fixed(c, 4); break;
	case DW_EH_PE_sdata8: v = rd_fixed(c, 8); break;
	default:
		c->bad = true;
		return 0;
	}
	switch (enc & 0x70) {
	case 0:
		break;
	case DW_EH_PE_pcrel:
		v += pos;
		break;
	case DW_EH_PE_datarel:
		v += data;
		break;
	default:
		c->bad = true;	/* textrel/funcrel/aligned: not used by GCC on x86_64 */
		return 0;
	}
	if (enc & DW_EH_PE_indirect)
		v = *(const uint64_t *)(uintptr_t)v;
	return v;
}

/* Register rule while interpreting CFA instructions. */
enum { R_SAME = 0, R_OFFSET, R_UNDEF, R_OTHER };

struct regrule {
	uint8_t how;
	int64_t off;
};

struct cfa_state {
	unsigned cfa_reg;
	int64_t cfa_off;
	bool cfa_expr;
	struct regrule rbp, ra;
};

struct cie {
	uint64_t code_align;
	int64_t data_align;
	unsigned ra_reg;
	uint8_t fde_enc;
	bool has_z, signal;
	const uint8_t *insns, *end;
};

static bool parse_cie(const uint8_t *p, struct cie *cie)
{
	struct cursor c;
	uint64_t len = *(const uint32_t *)p;
	const char *aug;
	uint8_t version;

	p += 4;
	if (len == 0xffffffff) {
		len = *(const uint64_t *)p;
		p += 8;
	}
	c.p = p;
	c.end = p + len;
	c.bad = false;
	if (rd_fixed(&c, len == 0 ? 0 : 4) != 0)	/* CIE id */
		return false;
	version = (uint8_t)rd_fixed(&c, 1);
	if (version != 1 && version != 3)
		return false;
	aug = (const char *)c.p;
	while (c.p < c.end && *c.p)
		c.p++;
	c.p++;
	memset(cie, 0, sizeof(*cie));
	cie->fde_enc = DW_EH_PE_absptr;
	if (aug[0] == 'e' && aug[1] == 'h')
		return false;
	cie->code_align = rd_uleb(&c);
	cie->data_align = rd_sleb(&c);
	cie->ra_reg = version == 1 ? (unsigned)rd_fixed(&c, 1) : (unsigned)rd_uleb(&c);
	if (aug[0] == 'z') {
		uint64_t alen = rd_uleb(&c);
		const uint8_t *aend = c.p + alen;
		const char *a;

		cie->has_z = true;
		for (a = aug + 1; *a && !c.bad; a++) {
			switch (*a) {
			case 'R':
				cie->fde_enc = (uint8_t)rd_fixed(&c, 1);
				break;
			case 'P': {
				uint8_t enc = (uint8_t)rd_fixed(&c, 1);

				/* Skip the personality pointer without following it. */
				rd_encoded(&c, enc & ~DW_EH_PE_indirect, 0);
				break;
			}
			case 'L':
				rd_fixed(&c, 1);
				break;
			case 'S':
				cie->signal = true;
				break;
			default:
				/* Unknown augmentation: its data is skipped via 'z'. */
				c.p = aend;
				break;
			}
		}
		c.p = aend;
	} else if (aug[0]) {
		return false;
	}
	if (c.bad || c.p > c.end)
		return false;
	cie->insns = c.p;
	cie->end = c.end;
	return true;
}

#define STATE_STACK 8

/*
 * Runs CFA instructions [p, end) until the row that covers `target` is
 * reached.  Returns false on an instruction it cannot follow.
 */
static bool run_cfa(const struct cie *cie, const uint8_t *p, const uint8_t *end, uint64_t *loc,
		    uint64_t target, struct cfa_state *st, const struct cfa_state *init,
		    struct cfa_state *stack, int *sp)
{
	struct cursor c = { p, end, false };

	while (c.p < c.end && !c.bad) {
		uint8_t op = *c.p++;
		uint8_t hi = op & 0xc0, low = op & 0x3f;
		uint64_t reg, delta = 0;
		int64_t off;

		if (hi == 0x40) {	/* DW_CFA_advance_loc */
			delta = low * cie->code_align;
			goto advance;
		}
		if (hi == 0x80) {	/* DW_CFA_offset */
			reg = low;
			off = (int64_t)rd_uleb(&c) * cie->data_align;
			goto set_offset;
		}
		if (hi == 0xc0) {	/* DW_CFA_restore */
			reg = low;
			goto restore;
		}
		switch (op) {
		case 0x00:	/* nop */
			continue;
		case 0x01:	/* set_loc */
			*loc = rd_encoded(&c, cie->fde_enc, 0);
			if (*loc > target)
				return true;
			continue;
		case 0x02:	/* advance_loc1 */
			delta = rd_fixed(&c, 1) * cie->code_align;
			goto advance;
		case 0x03:	/* advance_loc2 */
			delta = rd_fixed(&c, 2) * cie->code_align;
			goto advance;
		case 0x04:	/* advance_loc4 */
			delta = rd_fixed(&c, 4) * cie->code_align;
			goto advance;
		case 0x05:	/* offset_extended */
			reg = rd_uleb(&c);
			off = (int64_t)rd_uleb(&c) * cie->data_align;
			goto set_offset;
		case 0x11:	/* offset_extended_sf */
			reg = rd_uleb(&c);
			off = rd_sleb(&c) * cie->data_align;
			goto set_offset;
		case 0x2f:	/* GNU_negative_offset_extended */
			reg = rd_uleb(&c);
			off = -(int64_t)rd_uleb(&c) * cie->data_align;
			goto set_offset;
		case 0x06:	/* restore_extended */
			reg = rd_uleb(&c);
			goto restore;
		case 0x07:	/* undefined */
			reg = rd_uleb(&c);
			if (reg == REG_RBP)
				st->rbp.how = R_UNDEF;
			else if (reg == cie->ra_reg)
				st->ra.how = R_UNDEF;
			continue;
		case 0x08:	/* same_value */
			reg = rd_uleb(&c);
			if (reg == REG_RBP)
				st->rbp.how = R_SAME;
			else if (reg == cie->ra_reg)
				st->ra.how = R_OTHER;
			continue;
		case 0x09:	/* register */
			reg = rd_uleb(&c);
			rd_uleb(&c);
			if (reg == REG_RBP)
				st->rbp.how = R_OTHER;
			else if (reg == cie->ra_reg)
				st->ra.how = R_OTHER;
			continue;
		case 0x0a:	/* remember_state */
			if (*sp >= STATE_STACK)
				return false;
			stack[(*sp)++] = *st;
			continue;
		case 0x0b:	/* restore_state */
			if (*sp <= 0)
				return false;
			{
				/* The CFA rule is not part of the saved register state
				 * in DWARF, but GCC and every unwinder restore it. */
				*st = stack[--(*sp)];
			}
			continue;
		case 0x0c:	/* def_cfa */
			st->cfa_reg = (unsigned)rd_uleb(&c);
			st->cfa_off = (int64_t)rd_uleb(&c);
			st->cfa_expr = false;
			continue;
		case 0x12:	/* def_cfa_sf */
			st->cfa_reg = (unsigned)rd_uleb(&c);
			st->cfa_off = rd_sleb(&c) * cie->data_align;
			st->cfa_expr = false;
			continue;
		case 0x0d:	/* def_cfa_register */
			st->cfa_reg = (unsigned)rd_uleb(&c);
			st->cfa_expr = false;
			continue;
		case 0x0e:	/* def_cfa_offset */
			st->cfa_off = (int64_t)rd_uleb(&c);
			continue;
		case 0x13:	/* def_cfa_offset_sf */
			st->cfa_off = rd_sleb(&c) * cie->data_align;
			continue;
		case 0x0f:	/* def_cfa_expression */
			c.p += rd_uleb(&c);
			st->cfa_expr = true;
			continue;
		case 0x10:	/* expression */
		case 0x16:	/* val_expression */
			reg = rd_uleb(&c);
			c.p += rd_uleb(&c);
			if (reg == REG_RBP)
				st->rbp.how = R_OTHER;
			else if (reg == cie->ra_reg)
				st->ra.how = R_OTHER;
			continue;
		case 0x14:	/* val_offset */
			reg = rd_uleb(&c);
			rd_uleb(&c);
			goto val_other;
		case 0x15:	/* val_offset_sf */
			reg = rd_uleb(&c);
			rd_sleb(&c);
		val_other:
			if (reg == REG_RBP)
				st->rbp.how = R_OTHER;
			else if (reg == cie->ra_reg)
				st->ra.how = R_OTHER;
			continue;
		case 0x2e:	/* GNU_args_size */
			rd_uleb(&c);
			continue;
		default:
			return false;
		}
advance:
		if (*loc + delta > target)
			return true;
		*loc += delta;
		continue;
set_offset:
		if (reg == REG_RBP) {
			st->rbp.how = R_OFFSET;
			st->rbp.off = off;
		} else if (reg == cie->ra_reg) {
			st->ra.how = R_OFFSET;
			st->ra.off = off;
		}
		continue;
restore:
		if (init) {
			if (reg == REG_RBP)
				st->rbp = init->rbp;
			else if (reg == cie->ra_reg)
				st->ra = init->ra;
		}
		continue;
	}
	return !c.bad;
}

/* Parses the FDE at p; if it covers pc, computes the rule for pc. */
static uint64_t rule_from_fde(const uint8_t *fde, uint64_t pc, bool *covers)
{
	const uint8_t *p = fde, *cie_p, *end;
	uint64_t len = *(const uint32_t *)p, pc_begin, pc_range, loc;
	struct cfa_state st, init, stack[STATE_STACK];
	struct cie cie;
	struct cursor c;
	int sp = 0;
	uint32_t cie_off;

	*covers = false;
	p += 4;
	if (len == 0xffffffff) {
		len = *(const uint64_t *)p;
		p += 8;
	}
	end = p + len;
	cie_off = *(const uint32_t *)p;
	if (cie_off == 0)
		return rule_pack(RULE_FALLBACK, 0, 0, 0, 0);	/* a CIE, not an FDE */
	cie_p = p - cie_off;
	p += 4;
	if (!parse_cie(cie_p, &cie))
		return rule_pack(RULE_FALLBACK, 0, 0, 0, 0);
	c.p = p;
	c.end = end;
	c.bad = false;
	pc_begin = rd_encoded(&c, cie.fde_enc, 0);
	pc_range = rd_encoded(&c, cie.fde_enc & 0x0f, 0);
	if (c.bad)
		return rule_pack(RULE_FALLBACK, 0, 0, 0, 0);
	if (pc < pc_begin || pc >= pc_begin + pc_range)
		return rule_pack(RULE_FALLBACK, 0, 0, 0, 0);
	*covers = true;
	if (cie.signal)
		return rule_pack(RULE_FALLBACK, 0, 0, 0, 0);
	if (cie.has_z)
		c.p += rd_uleb(&c);
	memset(&st, 0, sizeof(st));
	st.cfa_reg = REG_RSP;
	st.ra.how = R_SAME;
	loc = pc_begin;
	if (!run_cfa(&cie, cie.insns, cie.end, &loc, UINT64_MAX, &st, NULL, stack, &sp))
		return rule_pack(RULE_FALLBACK, 0, 0, 0, 0);
	init = st;
	loc = pc_begin;
	if (!run_cfa(&cie, c.p, end, &loc, pc, &st, &init, stack, &sp))
		return rule_pack(RULE_FALLBACK, 0, 0, 0, 0);
	if (st.ra.how == R_UNDEF)
		return rule_pack(RULE_STOP, 0, 0, 0, 0);
	if (st.cfa_expr || (st.cfa_reg != REG_RSP && st.cfa_reg != REG_RBP) ||
	    st.ra.how != R_OFFSET || st.ra.off != -8 || st.rbp.how == R_OTHER ||
	    st.cfa_off > INT32_MAX || st.cfa_off < INT32_MIN ||
	    (st.rbp.how == R_OFFSET && (st.rbp.off > INT16_MAX || st.rbp.off < INT16_MIN)))
		return rule_pack(RULE_FALLBACK, 0, 0, 0, 0);
	return rule_pack(RULE_OK, st.cfa_reg == REG_RBP, st.rbp.how == R_OFFSET,
			 st.rbp.how == R_OFFSET ? (int)st.rbp.off : 0, (int32_t)st.cfa_off);
}

/* Binary search of .eh_frame_hdr's table for the FDE covering pc. */
static uint64_t rule_from_hdr(const uint8_t *hdr, uint64_t pc)
{
	struct cursor c = { hdr, hdr + 4096, false };
	uint64_t base = (uint64_t)(uintptr_t)hdr, count, lo, hi;
	uint8_t ver, ptr_enc, cnt_enc, tab_enc;
	const int32_t *tab;
	bool covers;
	uint64_t rule;

	ver = hdr[0];
	ptr_enc = hdr[1];
	cnt_enc = hdr[2];
	tab_enc = hdr[3];
	if (ver != 1 || tab_enc != (DW_EH_PE_datarel | DW_EH_PE_sdata4))
		return rule_pack(RULE_FALLBACK, 0, 0, 0, 0);
	c.p = hdr + 4;
	rd_encoded(&c, ptr_enc, base);
	count = rd_encoded(&c, cnt_enc, base);
	if (c.bad || count == 0)
		return rule_pack(RULE_FALLBACK, 0, 0, 0, 0);
	tab = (const int32_t *)c.p;
	lo = 0;
	hi = count;
	/* Largest entry whose initial location is <= pc. */
	while (hi - lo > 1) {
		uint64_t mid = (lo + hi) / 2;

		if (base + (uint64_t)(int64_t)tab[2 * mid] <= pc)
			lo = mid;
		else
			hi = mid;
	}
	if (base + (uint64_t)(int64_t)tab[2 * lo] > pc)
		return rule_pack(RULE_FALLBACK, 0, 0, 0, 0);
	rule = rule_from_fde((const uint8_t *)(uintptr_t)(base + (uint64_t)(int64_t)tab[2 * lo + 1]),
			     pc, &covers);
	return covers ? rule : rule_pack(RULE_FALLBACK, 0, 0, 0, 0);
}

int (*find_object)(void *, struct shim_dl_find_object *);

struct phdr_search {
	uint64_t pc;
	const uint8_t *eh_hdr;
};

static int phdr_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct phdr_search *s = arg;
	const uint8_t *hdr = NULL;
	bool inside = false;
	int i;

	(void)size;
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uint64_t start = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_LOAD && s->pc >= start && s->pc < start + ph->p_memsz)
			inside = true;
		else if (ph->p_type == PT_GNU_EH_FRAME)
			hdr = (const uint8_t *)(uintptr_t)(info->dlpi_addr + ph->p_vaddr);
	}
	if (!inside)
		return 0;
	s->eh_hdr = hdr;
	return 1;
}

uint64_t compute_rule(uint64_t pc)
{
	const uint8_t *hdr = NULL;

	if (find_object) {
		struct shim_dl_find_object fo;

		if (find_object((void *)(uintptr_t)pc, &fo) == 0)
			hdr = fo.dlfo_eh_frame;
	}
	if (!hdr) {
		struct phdr_search s = { pc, NULL };

		dl_iterate_phdr(phdr_cb, &s);
		hdr = s.eh_hdr;
	}
	if (!hdr)
		return rule_pack(RULE_FALLBACK, 0, 0, 0, 0);
	return rule_from_hdr(hdr, pc);
}
