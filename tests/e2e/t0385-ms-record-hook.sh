#!/bin/sh
# ms-record --hook: examples/pools without annotations, its pool functions in
# libpools.so, hooked by name, gives the annotated version's leaks; modules
# dlopen'ed later are patched too; bad specs are usage errors.
. "$(dirname "$0")/lib.sh"

HOOKS="--hook pool_get=alloc,size=arg2 --hook pool_put=free,ptr=arg2
	--hook buf_alloc=alloc,size=arg1 --hook buf_resize=realloc,ptr=arg1,size=arg2"

# leaks_by_caller FILE: "caller count bytes kind size" per leak record: the
# first frame that is not the pool's (annotated stacks start inside it,
# hooked ones at its caller).
leaks_by_caller() {
	v1 "$1" | jq -r -s '
		(map(select(.type=="stack")) | map({key: (.id|tostring), value: .frames}) | from_entries) as $s
		| .[] | select(.type=="leak")
		| ([$s[(.stack|tostring)][] | select(.fn | IN("pool_get", "buf_alloc", "buf_resize") | not)][0].fn) as $c
		| "\($c) \(.count) \(.bytes) \(.kind) \(.size)"' | sort
}

# shellcheck disable=SC2086
check_status "pools-hook runs with --hook" 0 ms-record -q $HOOKS -o "$OUT/hook.ndjson" "$EX/pools-hook"
check_status "pools runs annotated" 0 ms-record -q -o "$OUT/annotated.ndjson" "$EX/pools"
H="$OUT/hook.ndjson"
A="$OUT/annotated.ndjson"
check_eq "hook: the stream is well formed" "" "$(valid_stream "$H")"
# The same leaks, but the 10 objects the annotated program's destroy of
# "strings" releases: --hook knows no pools, and they leak with its chunk.
check_eq "hook: leaks as annotated, plus the destroyed pool's 10" \
	"$(printf '%s\n' "$(leaks_by_caller "$A")" 'fill_strings 10 320 definitely 32' | sort)" \
	"$(leaks_by_caller "$H")"
check_eq "hook: the same allocations and bytes as annotated" \
	"$(jq -r 'select(.type=="end") | "\(.allocs) \(.bytes)"' "$A")" \
	"$(jq -r 'select(.type=="end") | "\(.allocs) \(.bytes)"' "$H")"
check_eq "hook: frees as annotated, but the destroy's 10" \
	"$(jq -r 'select(.type=="end") | .frees - 10' "$A")" \
	"$(jq -r 'select(.type=="end") | .frees' "$H")"
check_eq "hook: blocks are custom" "custom" "$(jq -r 'select(.type=="leak") | .fn' "$H" | sort -u)"
check_eq "hook: the realloc's first block is freed" "1 1" \
	"$(jq -r 'select(.type=="site" and .size==16 and .fn=="custom") | "\(.allocs) \(.frees)"' "$H")"
check_eq "hook: the program's output is its own" "$("$EX/pools-hook")" \
	"$(ms-record -q $HOOKS -o /dev/null "$EX/pools-hook")"
check_eq "no --hook: no custom blocks" "" \
	"$(ms-record -q "$EX/pools-hook" 2>/dev/null | jq -r 'select(.type=="site" and .fn=="custom") | .size')"

# A hooked name no module imports yet: a warning, then a dlopen brings it.
cat >"$OUT/user.c" <<'EOF'
#include <stddef.h>
void pool_init(void *p, const char *name, size_t obj, unsigned nobj);
void *pool_get(void *p, size_t n);
static char pool[64] __attribute__((aligned(16)));
void use_pool(void)
{
	char *b;

	pool_init(pool, "late", 16, 8);
	b = pool_get(pool, 16);		/* and forgotten */
	b[0] = 1;
}
EOF
cat >"$OUT/late.c" <<'EOF'
#include <dlfcn.h>
#include <stdio.h>
int main(int argc, char **argv)
{
	void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	void (*use)(void) = h ? (void (*)(void))dlsym(h, "use_pool") : NULL;

	(void)argc;
	if (!use)
		return 1;
	use();
	return 0;
}
EOF
check_status "build the late user" 0 cc -O1 -g -fPIC -shared -o "$OUT/libuser.so" "$OUT/user.c" \
	-L"$EX" -lpools -Wl,-rpath,"$EX"
check_status "build the dlopen'ing program" 0 cc -O1 -g -o "$OUT/late" "$OUT/late.c" -ldl
check_status "late: runs with --hook" 0 ms-record --hook pool_get=alloc,size=arg2 \
	-o "$OUT/late.ndjson" "$OUT/late" "$OUT/libuser.so"
check_eq "late: warned that nothing called it at the start" \
	"ms-record: warning: --hook pool_get: no loaded module calls it (yet: modules loaded later are patched)" \
	"$(grep -F -- '--hook' "$OUT/last.err")"
check_status "late: -q" 0 ms-record -q --hook pool_get=alloc,size=arg2 -o /dev/null "$OUT/late" \
	"$OUT/libuser.so"
check_eq "late: -q keeps the warning quiet" "" "$(cat "$OUT/last.err")"
# Reachable: the pool's chunk pointer, in libuser's pool, points at it.
check_eq "late: the dlopen'ed module's call is hooked" "use_pool 1 16 reachable 16" \
	"$(leaks_by_caller "$OUT/late.ndjson" | grep use_pool)"

# Bad specs: one line, exit 2, nothing run.
for spec in pool_get pool_get=alloc pool_get=alloc,size=arg7 pool_get=alloc,size=arg0 \
	    pool_get=alloc,ptr=arg1 pool_get=free,size=arg1 pool_get=realloc,ptr=arg1 \
	    pool_get=grab,size=arg1 '1x=alloc,size=arg1' '=alloc,size=arg1' \
	    'pool_get=alloc,size=arg1,size=arg2' 'pool_get=alloc,size=arg1,'; do
	check_status "bad spec '$spec': exit 2" 2 ms-record -q --hook "$spec" -o /dev/null "$EX/pools-hook"
done
ms-record -q --hook pool_get=alloc,size=argx -o /dev/null "$EX/pools-hook" 2>"$OUT/bad.err"
check_eq "bad spec: the message" \
	"ms-record: invalid --hook 'pool_get=alloc,size=argx': alloc takes size=argN (N from 1 to 6)" \
	"$(head -1 "$OUT/bad.err")"
check_status "the same name twice: exit 2" 2 ms-record -q --hook pool_get=alloc,size=arg2 \
	--hook pool_get=free,ptr=arg2 -o /dev/null "$EX/pools-hook"
check_status "--hook with -p: exit 2" 2 ms-record -q --hook pool_get=alloc,size=arg2 -p 1

# A hooked dlopen is called from libmemscope.so: a bare name must still be
# found through the calling program's RUNPATH ($ORIGIN/lib), as without us.
mkdir -p "$OUT/rp/lib"
echo 'const char *x_hello(void) { return "x: loaded"; }' >"$OUT/rp/x.c"
cat >"$OUT/rp/main.c" <<'EOF'
#include <dlfcn.h>
#include <stdio.h>
int main(void)
{
	void *h = dlopen("libx.so", RTLD_NOW);

	if (!h) {
		printf("main: %s\n", dlerror());
		return 1;
	}
	printf("%s\n", ((const char *(*)(void))dlsym(h, "x_hello"))());
	return 0;
}
EOF
cc -shared -fPIC -o "$OUT/rp/lib/libx.so" "$OUT/rp/x.c"
cc -o "$OUT/rp/main" "$OUT/rp/main.c" -ldl -Wl,-rpath,'$ORIGIN/lib'
check_eq "RUNPATH plugin: loads alone" "x: loaded" "$("$OUT/rp/main")"
check_eq "RUNPATH plugin: loads with dlopen hooked" "x: loaded" \
	"$(ms-record -q --hook pool_get=alloc,size=arg2 -o /dev/null "$OUT/rp/main" 2>/dev/null)"
cc -o "$OUT/rp/main-rpath" "$OUT/rp/main.c" -ldl -Wl,--disable-new-dtags,-rpath,'$ORIGIN/lib'
check_eq "RPATH plugin: loads with dlopen hooked" "x: loaded" \
	"$(ms-record -q --hook pool_get=alloc,size=arg2 -o /dev/null "$OUT/rp/main-rpath" 2>/dev/null)"

finish
