# glibc's shape without glibc: f2 sets up its result and jumps one
# instruction into f1 (as __mempcpy_* jump into __memcpy_*), f3 reaches a
# label of its own only through a table in data; main calls each three
# times and exits with the sum of their results. A 5-byte patch at f1's
# entry would cover .Lstart.
	.text
	.globl f1
	.type f1, @function
f1:
	mov %rdi, %rax
.Lstart:
	add $1, %rax
	add $2, %rax
	ret
	.size f1, .-f1

	.globl f2
	.type f2, @function
f2:
	mov %rsi, %rax
	jmp .Lstart
	.size f2, .-f2

	.globl f3
	.type f3, @function
f3:
	xor %eax, %eax
	mov %rdi, %rcx
	jmp *table(%rip)
	nop
.Lviadata:
	inc %eax
	add %ecx, %eax
	ret
	.size f3, .-f3

	.globl main
	.type main, @function
main:
	push %rbx
	push %r12
	xor %ebx, %ebx
	mov $3, %r12d
1:
	mov $1, %edi
	call f1
	add %eax, %ebx
	mov $2, %esi
	call f2
	add %eax, %ebx
	mov $4, %edi
	call f3
	add %eax, %ebx
	dec %r12d
	jnz 1b
	mov %ebx, %eax
	and $0x7f, %eax
	pop %r12
	pop %rbx
	ret
	.size main, .-main

	.data
	.align 8
table:
	.quad .Lviadata
	.section .note.GNU-stack,"",@progbits
