/* Functions whose first instruction is each kind the out-of-line engine
 * relocates; --funcs plants a site on each. main calls each 1000 times (the
 * ones that test flags or rcx through a wrapper that sets them) and prints a
 * checksum of the results, which must equal the native run's. */
#include <stdio.h>
#include <string.h>

long slot_value = 5;
long helper(long x) { return x + 100; }
long (*helper_ptr)(long) = helper;
char src_buf[64] = "relocation source buffer, sixty-four bytes long, more or less..";
char dst_buf[64];

long r_load(void);
long r_store(long);
long r_lea(void);
long r_cmpimm(void);
long r_call(long);
long r_callmem(long);
long r_callreg(long, long);
long r_jmp8(void);
long r_jmp32(long);
long r_jmpmem(long);
long r_jcc8(long, long);
long r_jcc32(long, long);
long r_loop(long);
long r_jrcxz(long);
long r_ret(void);
long r_retimm(void);
long r_push(long);
long r_repmovsb(void);
long r_endbr(long);
long r_syscall(void);
long r_cmpxchg(long);

__asm__(
	".text\n"
	".globl r_load\n.type r_load, @function\nr_load:\n\tmovq slot_value(%rip), %rax\n\tret\n"
	".globl r_store\n.type r_store, @function\nr_store:\n\tmovq %rdi, slot_value(%rip)\n\tmovq %rdi, %rax\n\tret\n"
	".globl r_lea\n.type r_lea, @function\nr_lea:\n\tleaq slot_value(%rip), %rax\n\tmovq (%rax), %rax\n\tret\n"
	".globl r_cmpimm\n.type r_cmpimm, @function\nr_cmpimm:\n\tcmpq $5, slot_value(%rip)\n\tsete %al\n\tmovzbq %al, %rax\n\tret\n"
	".globl r_call\n.type r_call, @function\nr_call:\n\tcall helper_aligned\n\tret\n"
	".type helper_aligned, @function\nhelper_aligned:\n\tpushq %rbp\n\tcall helper\n\tpopq %rbp\n\tret\n"
	".globl r_callmem\n.type r_callmem, @function\nr_callmem:\n\tcall *helper_ptr(%rip)\n\tret\n"
	".globl r_callreg\n.type r_callreg, @function\nr_callreg:\n\tcall *%rsi\n\tret\n"
	".globl r_jmp8\n.type r_jmp8, @function\nr_jmp8:\n\tjmp 1f\n\tmovq $1, %rax\n\tret\n1:\tmovq $2, %rax\n\tret\n"
	".globl r_jmp32\n.type r_jmp32, @function\nr_jmp32:\n\tjmp helper\n"
	".globl r_jmpmem\n.type r_jmpmem, @function\nr_jmpmem:\n\tjmp *helper_ptr(%rip)\n"
	/* jcc at the entry: the wrappers set the flags, then jump to it. */
	".globl r_jcc8\n.type r_jcc8, @function\nr_jcc8:\n\tcmpq %rsi, %rdi\n\tjmp jcc8_entry\n"
	".type jcc8_entry, @function\njcc8_entry:\n\tjl 1f\n\tmovq $10, %rax\n\tret\n1:\tmovq $20, %rax\n\tret\n"
	".globl r_jcc32\n.type r_jcc32, @function\nr_jcc32:\n\tcmpq %rsi, %rdi\n\tjmp jcc32_entry\n"
	".type jcc32_entry, @function\njcc32_entry:\n\tjl.d32 1f\n\tmovq $30, %rax\n\tret\n1:\tmovq $40, %rax\n\tret\n"
	".globl r_loop\n.type r_loop, @function\nr_loop:\n\tmovq %rdi, %rcx\n\txorq %rax, %rax\n\tjmp loop_entry\n"
	".type loop_entry, @function\nloop_entry:\n\tloop 1f\n\taddq $1000, %rax\n\tret\n1:\taddq $1, %rax\n\tjmp loop_entry\n"
	".globl r_jrcxz\n.type r_jrcxz, @function\nr_jrcxz:\n\tmovq %rdi, %rcx\n\tjmp jrcxz_entry\n"
	".type jrcxz_entry, @function\njrcxz_entry:\n\tjrcxz 1f\n\tmovq $50, %rax\n\tret\n1:\tmovq $60, %rax\n\tret\n"
	".globl r_ret\n.type r_ret, @function\nr_ret:\n\tmovq $70, %rax\n\tjmp ret_entry\n"
	".type ret_entry, @function\nret_entry:\n\tret\n"
	".globl r_retimm\n.type r_retimm, @function\nr_retimm:\n\tmovq $80, %rax\n\tpushq $0\n\tcall retimm_entry\n\tret\n"
	".type retimm_entry, @function\nretimm_entry:\n\tret $8\n"
	".globl r_push\n.type r_push, @function\nr_push:\n\tpushq %rdi\n\tpopq %rax\n\taddq $1, %rax\n\tret\n"
	".globl r_repmovsb\n.type r_repmovsb, @function\nr_repmovsb:\n\tleaq src_buf(%rip), %rsi\n\tleaq dst_buf(%rip), %rdi\n\tmovq $64, %rcx\n\tjmp rep_entry\n"
	".type rep_entry, @function\nrep_entry:\n\trep movsb\n\tmovzbq dst_buf+10(%rip), %rax\n\tret\n"
	".globl r_endbr\n.type r_endbr, @function\nr_endbr:\n\tendbr64\n\tleaq 3(%rdi), %rax\n\tret\n"
	".globl r_syscall\n.type r_syscall, @function\nr_syscall:\n\tmovq $39, %rax\n\tjmp syscall_entry\n" /* getpid */
	".type syscall_entry, @function\nsyscall_entry:\n\tsyscall\n\tmovq $90, %rax\n\tret\n"
	".globl r_cmpxchg\n.type r_cmpxchg, @function\nr_cmpxchg:\n\tmovq slot_value(%rip), %rax\n\tjmp cmpxchg_entry\n"
	".type cmpxchg_entry, @function\ncmpxchg_entry:\n\tlock cmpxchgq %rdi, slot_value(%rip)\n\tmovq slot_value(%rip), %rax\n\tret\n"
);

int main(void)
{
	unsigned long sum = 0;
	for (long i = 0; i < 1000; i++) {
		slot_value = 5;
		sum = sum * 31 + r_load();
		sum = sum * 31 + r_cmpimm();
		sum = sum * 31 + r_store(i);
		sum = sum * 31 + r_lea();
		sum = sum * 31 + r_call(i);
		sum = sum * 31 + r_callmem(i);
		sum = sum * 31 + r_callreg(i, (long)helper);
		sum = sum * 31 + r_jmp8();
		sum = sum * 31 + r_jmp32(i);
		sum = sum * 31 + r_jmpmem(i);
		sum = sum * 31 + r_jcc8(i % 3, 1);
		sum = sum * 31 + r_jcc32(i % 3, 1);
		sum = sum * 31 + r_loop(i % 5 + 1);
		sum = sum * 31 + r_jrcxz(i % 2);
		sum = sum * 31 + r_ret();
		sum = sum * 31 + r_retimm();
		sum = sum * 31 + r_push(i);
		memset(dst_buf, 0, sizeof dst_buf);
		sum = sum * 31 + r_repmovsb();
		sum = sum * 31 + r_endbr(i);
		sum = sum * 31 + r_syscall();
		sum = sum * 31 + r_cmpxchg(i + 7);
	}
	printf("sum %lu\n", sum);
	return 0;
}
