/* SPDX-License-Identifier: MIT */
/*
 * dlclose: note that code may have been unmapped (the unwinders' rule caches
 * are flushed at their next capture), then jump to the real dlclose.
 *
 * dlopen is deliberately not interposed: glibc resolves a dlopen'ed name
 * with the RUNPATH of the object that called dlopen, found from the return
 * address, and an interposer would become that caller.  New modules are
 * noticed instead by dl_iterate_phdr's load counters when a new stack is
 * interned (modules.c, modules_check).  A jump keeps this stub frameless.
 */
	.text
	.globl	dlclose
	.type	dlclose, @function
dlclose:
	.cfi_startproc
	lock incl	shim_module_epoch(%rip)
	movq	shim_real_dlclose(%rip), %rax
	testq	%rax, %rax
	jz	1f
	jmp	*%rax
1:	jmp	shim_dlclose_slow
	.cfi_endproc
	.size	dlclose, .-dlclose
	.section	.note.GNU-stack,"",@progbits
