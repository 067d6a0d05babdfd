// jitspin.cc - a C++ program that runs code it generated, for perf-fold's perf.data test:
// C++ names (namespaces, templates, an anonymous namespace) that perf shows demangled, and
// a JIT region (anonymous executable memory) named by a /tmp/perf-PID.map, as a JIT writes
// it.  x86-64 only (the generated loop is machine code); elsewhere it only spins in C++.
#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>

namespace spanfold_test {
namespace {
volatile unsigned long sink;

template <typename T> struct Worker {
    T seed;
    __attribute__((noinline)) T churn(unsigned long n)
    {
        T acc = seed;
        for (unsigned long i = 0; i < n; i++)
            acc = acc * 31 + static_cast<T>(i);
        return acc;
    }
};
} // namespace

__attribute__((noinline)) void run_jit(unsigned long rounds)
{
#if defined(__x86_64__)
    // mov rcx, imm32 ; l: dec rcx ; jnz l ; ret
    static const unsigned char loop[] = {0x48, 0xc7, 0xc1, 0x00, 0x00, 0x00, 0x10,
                                         0x48, 0xff, 0xc9, 0x75, 0xfb, 0xc3};
    void *code = mmap(nullptr, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
                      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (code == MAP_FAILED)
        return;
    std::memcpy(code, loop, sizeof(loop));
    char path[64];
    std::snprintf(path, sizeof(path), "/tmp/perf-%d.map", static_cast<int>(getpid()));
    if (FILE *f = std::fopen(path, "w")) {
        std::fprintf(f, "%lx %zx jit_spin_loop\n", reinterpret_cast<unsigned long>(code),
                     sizeof(loop));
        std::fclose(f);
    }
    for (unsigned long r = 0; r < rounds; r++)
        reinterpret_cast<void (*)()>(code)();
#else
    (void)rounds;
#endif
}

__attribute__((noinline)) void run_cpp(unsigned long n)
{
    Worker<unsigned long> a{7};
    Worker<unsigned int> b{3};
    sink = a.churn(n) + b.churn(n);
}
} // namespace spanfold_test

int main()
{
    spanfold_test::run_jit(4);
    spanfold_test::run_cpp(100000000ul);
    return 0;
}
