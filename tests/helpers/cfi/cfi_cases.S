/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * Hand-made call frame information for tests/unit/test_unwind_table.c: each function's
 * rules are written out with .cfi directives, so the rows the compiler makes of them are
 * known.  Never run; linked into a shared object so .eh_frame holds final addresses.
 * Each label marks an instruction whose row the test checks.
 */
	.text
	.globl	cfi_fp
	.type	cfi_fp, @function
	.p2align 4
cfi_fp:			/* a frame-pointer frame: push rbp; mov rsp, rbp; ...; pop rbp; ret */
	.cfi_startproc
	pushq	%rbp
	.globl	cfi_fp_pushed
cfi_fp_pushed:
	.cfi_def_cfa_offset 16
	.cfi_offset %rbp, -16
	movq	%rsp, %rbp
	.globl	cfi_fp_body
cfi_fp_body:
	.cfi_def_cfa_register %rbp
	nop
	nop
	popq	%rbp
	.globl	cfi_fp_popped
cfi_fp_popped:
	.cfi_def_cfa %rsp, 8
	ret
	.cfi_endproc
	.size	cfi_fp, .-cfi_fp

	/* no CFI at all: a gap the table marks as such */
	.globl	cfi_gap
	.type	cfi_gap, @function
cfi_gap:
	nop
	nop
	nop
	ret
	.size	cfi_gap, .-cfi_gap

	.globl	cfi_nofp
	.type	cfi_nofp, @function
	.p2align 4
cfi_nofp:		/* no frame pointer: the CFA moves with rsp */
	.cfi_startproc
	pushq	%rbx
	.globl	cfi_nofp_pushed
cfi_nofp_pushed:
	.cfi_def_cfa_offset 16
	.cfi_offset %rbx, -16
	subq	$4096, %rsp
	.globl	cfi_nofp_body
cfi_nofp_body:
	.cfi_def_cfa_offset 4112
	nop
	addq	$4096, %rsp
	.cfi_def_cfa_offset 16
	popq	%rbx
	.cfi_def_cfa_offset 8
	ret
	.cfi_endproc
	.size	cfi_nofp, .-cfi_nofp

	.globl	cfi_outermost
	.type	cfi_outermost, @function
	.p2align 4
cfi_outermost:		/* as _start: the return address is undefined */
	.cfi_startproc
	.cfi_undefined %rip
	xorl	%ebp, %ebp
	nop
	ret
	.cfi_endproc
	.size	cfi_outermost, .-cfi_outermost

	.globl	cfi_plt
	.type	cfi_plt, @function
	.p2align 4
cfi_plt:		/* the CFA expression of PLT stubs: rsp + 8 + ((rip & 15) >= 11) * 8 */
	.cfi_startproc
	.cfi_escape 0x0f, 0x0b, 0x77, 0x08, 0x80, 0x00, 0x3f, 0x1a, 0x3b, 0x2a, 0x33, 0x24, 0x22
	nop
	ret
	.cfi_endproc
	.size	cfi_plt, .-cfi_plt

	.globl	cfi_odd
	.type	cfi_odd, @function
	.p2align 4
cfi_odd:		/* rules the walk cannot follow */
	.cfi_startproc
	pushq	%rbp
	.cfi_def_cfa_offset 16
	.cfi_register %rbp, %rbx	/* the caller's rbp kept in rbx: lost to the walk */
	.globl	cfi_odd_rbx
cfi_odd_rbx:
	nop
	.cfi_def_cfa %rbx, 16		/* the CFA from rbx: not followed */
	.globl	cfi_odd_cfa
cfi_odd_cfa:
	nop
	.cfi_def_cfa %rsp, 16
	.cfi_offset %rip, -16		/* the return address elsewhere than CFA - 8 */
	.globl	cfi_odd_ra
cfi_odd_ra:
	nop
	ret
	.cfi_endproc
	.size	cfi_odd, .-cfi_odd
	.section .note.GNU-stack,"",@progbits
