/* ctx.c — user-level context switch (ctx.h). */
#include "ctx.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#if defined(__SANITIZE_ADDRESS__)
#define CTX_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CTX_ASAN 1
#endif
#endif
#if defined(__SANITIZE_THREAD__)
#define CTX_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define CTX_TSAN 1
#endif
#endif

#ifdef CTX_ASAN
void __sanitizer_start_switch_fiber(void **fake_stack_save, const void *bottom, size_t size);
void __sanitizer_finish_switch_fiber(void *fake_stack_save, const void **bottom_old,
                                     size_t *size_old);
void __asan_unpoison_memory_region(void const volatile *addr, size_t size);
#endif

/* A context that ends by switching away for good (or is never finished: a killed rank)
 * leaves its frames' redzones poisoned in ASan's shadow; a later stack mapped at the same
 * address would inherit them. */
static void asan_clean_stack(struct ctx *c)
{
#ifdef CTX_ASAN
    if (c->stack_lo) __asan_unpoison_memory_region(c->stack_lo, c->stack_size);
#else
    (void)c;
#endif
}
#ifdef CTX_TSAN
void *__tsan_get_current_fiber(void);
void *__tsan_create_fiber(unsigned flags);
void __tsan_destroy_fiber(void *fiber);
void __tsan_switch_to_fiber(void *fiber, unsigned flags);
#endif

/* Tells ASan the thread is now on c's stack (first entry of a context: no fake stack yet). */
static void asan_arrived(void *fake_stack)
{
#ifdef CTX_ASAN
    __sanitizer_finish_switch_fiber(fake_stack, NULL, NULL);
#else
    (void)fake_stack;
#endif
}

struct entry {
    void (*fn)(void *);
    void *arg;
};

#if defined(__x86_64__)

/* tmpi_ctx_swap(&from->sp, to->sp): pushes rbp, rbx, r12-r15 and the SSE/x87 control words,
 * stores rsp, loads the other stack and pops the same.  A new stack is laid out by ctx_init so
 * that the pops land in tmpi_ctx_start with the entry in r12 (fn) and r13 (arg). */
void tmpi_ctx_swap(void **save_sp, void *new_sp);
void tmpi_ctx_start(void);
__asm__(".text\n"
        ".globl tmpi_ctx_swap\n"
        ".hidden tmpi_ctx_swap\n"
        ".type tmpi_ctx_swap,@function\n"
        "tmpi_ctx_swap:\n"
        "    .cfi_startproc\n"
        "    pushq %rbp\n"
        "    pushq %rbx\n"
        "    pushq %r12\n"
        "    pushq %r13\n"
        "    pushq %r14\n"
        "    pushq %r15\n"
        "    subq $8, %rsp\n"
        "    stmxcsr (%rsp)\n"
        "    fnstcw 4(%rsp)\n"
        "    movq %rsp, (%rdi)\n"
        "    movq %rsi, %rsp\n"
        "    ldmxcsr (%rsp)\n"
        "    fldcw 4(%rsp)\n"
        "    addq $8, %rsp\n"
        "    popq %r15\n"
        "    popq %r14\n"
        "    popq %r13\n"
        "    popq %r12\n"
        "    popq %rbx\n"
        "    popq %rbp\n"
        "    ret\n"
        "    .cfi_endproc\n"
        ".size tmpi_ctx_swap,.-tmpi_ctx_swap\n"
        ".globl tmpi_ctx_start\n"
        ".hidden tmpi_ctx_start\n"
        ".type tmpi_ctx_start,@function\n"
        "tmpi_ctx_start:\n"
        "    .cfi_startproc\n"
        "    .cfi_undefined rip\n"
        "    movq %r13, %rdi\n"
        "    callq *%r12\n"
        "    ud2\n"
        "    .cfi_endproc\n"
        ".size tmpi_ctx_start,.-tmpi_ctx_start\n");

static void ctx_entry(void *p)
{
    asan_arrived(NULL);
    struct entry *e = p;
    e->fn(e->arg);
    __builtin_trap(); /* fn switches away for good; it never returns */
}

static int arch_init(struct ctx *c, void (*fn)(void *), void *arg)
{
    uintptr_t top = ((uintptr_t)c->stack_lo + c->stack_size) & ~(uintptr_t)15;
    /* The entry block sits at the top of the stack; the frame below it is what
     * tmpi_ctx_swap pops: control words, r15, r14, r13 (arg), r12 (fn), rbx, rbp, return
     * address.  After the ret, rsp = top: 16-byte aligned, as the call in tmpi_ctx_start wants. */
    top -= 32;
    struct entry *e = (struct entry *)top;
    e->fn = fn;
    e->arg = arg;
    uint64_t *sp = (uint64_t *)top;
    *--sp = (uint64_t)(uintptr_t)tmpi_ctx_start;
    *--sp = 0;                              /* rbp */
    *--sp = 0;                              /* rbx */
    *--sp = (uint64_t)(uintptr_t)ctx_entry; /* r12 */
    *--sp = (uint64_t)(uintptr_t)e;         /* r13 */
    *--sp = 0;                              /* r14 */
    *--sp = 0;                              /* r15 */
    uint32_t csr[2] = {0x1f80, 0x037f};     /* default MXCSR, x87 control word */
    *--sp = (uint64_t)csr[0] | (uint64_t)csr[1] << 32;
    c->sp = sp;
    return 0;
}

static void arch_switch(struct ctx *from, struct ctx *to)
{
    tmpi_ctx_swap(&from->sp, to->sp);
}

static void arch_init_thread(struct ctx *c)
{
    c->sp = NULL;
}

#else /* portable fallback: ucontext (a signal-mask system call per switch) */

static void uc_entry(unsigned hi, unsigned lo)
{
    struct entry *e = (struct entry *)(((uintptr_t)hi << 32) | (uintptr_t)lo);
    asan_arrived(NULL);
    e->fn(e->arg);
    __builtin_trap();
}

static int arch_init(struct ctx *c, void (*fn)(void *), void *arg)
{
    uintptr_t top =
        ((uintptr_t)c->stack_lo + c->stack_size - sizeof(struct entry)) & ~(uintptr_t)15;
    struct entry *e = (struct entry *)top;
    e->fn = fn;
    e->arg = arg;
    if (getcontext(&c->uc) != 0) return -errno;
    c->uc.uc_stack.ss_sp = c->stack_lo;
    c->uc.uc_stack.ss_size = top - (uintptr_t)c->stack_lo;
    c->uc.uc_link = NULL;
    uint64_t v = (uintptr_t)e;
    makecontext(&c->uc, (void (*)(void))uc_entry, 2, (unsigned)(v >> 32), (unsigned)v);
    return 0;
}

static void arch_switch(struct ctx *from, struct ctx *to)
{
    swapcontext(&from->uc, &to->uc);
}

static void arch_init_thread(struct ctx *c)
{
    memset(&c->uc, 0, sizeof c->uc);
}

#endif

void ctx_init_thread(struct ctx *c)
{
    memset(c, 0, sizeof *c);
    arch_init_thread(c);
#ifdef CTX_ASAN
    pthread_attr_t a;
    if (pthread_getattr_np(pthread_self(), &a) == 0) {
        pthread_attr_getstack(&a, &c->stack_lo, &c->stack_size);
        pthread_attr_destroy(&a);
    }
#endif
#ifdef CTX_TSAN
    c->tsan_fiber = __tsan_get_current_fiber();
#endif
}

int ctx_init(struct ctx *c, void *stack_lo, size_t size, void (*fn)(void *), void *arg)
{
    memset(c, 0, sizeof *c);
    c->stack_lo = stack_lo;
    c->stack_size = size;
    asan_clean_stack(c);
#ifdef CTX_TSAN
    c->tsan_fiber = __tsan_create_fiber(0);
    if (!c->tsan_fiber) return -ENOMEM;
    c->tsan_own = 1;
#endif
    return arch_init(c, fn, arg);
}

void ctx_switch(struct ctx *from, struct ctx *to)
{
#ifdef CTX_ASAN
    void *fake = NULL;
    __sanitizer_start_switch_fiber(&fake, to->stack_lo, to->stack_size);
#endif
#ifdef CTX_TSAN
    __tsan_switch_to_fiber(to->tsan_fiber, 0);
#endif
    arch_switch(from, to);
#ifdef CTX_ASAN
    __sanitizer_finish_switch_fiber(fake, NULL, NULL);
#endif
}

void ctx_destroy(struct ctx *c)
{
    asan_clean_stack(c);
#ifdef CTX_TSAN
    if (c->tsan_own && c->tsan_fiber) __tsan_destroy_fiber(c->tsan_fiber);
#endif
    c->tsan_fiber = NULL;
    c->tsan_own = 0;
}
