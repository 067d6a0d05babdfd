// stl.cc - a C++ program for tests/perf-fold/t_a2l_dw.sh: the standard library's templates
// inlined into each other (vector, sort, map), a virtual call, a lambda and an extern "C"
// function, so that the compilers' DWARF has nested inline chains, functions in several
// pieces and, with clang's DWARF 5, range lists named by index.
#include <algorithm>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

namespace spanfold_test {
template <class T> struct Box {
    T v;
    T get() const { return v * 2; }
};

static inline int helper(int x) { return x * 3 + 1; }

class Runner {
  public:
    virtual ~Runner() {}
    virtual int run(int n) const;
};

int Runner::run(int n) const
{
    std::vector<int> v;
    for (int i = 0; i < n; i++)
        v.push_back(helper(i) % 97);
    std::sort(v.begin(), v.end());
    return v.empty() ? 0 : v[v.size() / 2];
}
} // namespace spanfold_test

extern "C" int plain_c(int x) { return x + 1; }

int main(int argc, char **argv)
{
    (void)argv;
    std::map<std::string, int> m;
    m["a"] = argc;
    spanfold_test::Box<long> b{argc};
    spanfold_test::Runner r;
    auto f = [&](int k) { return r.run(k) + static_cast<int>(b.get()); };
    std::printf("%d %d\n", f(argc * 1000), plain_c(m["a"]));
    return 0;
}
