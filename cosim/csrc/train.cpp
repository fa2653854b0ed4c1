// Training run of a profile-guided build (sbrp-cosim, cosim/src/builder.rs):
// loads an instrumented model library, steps it through recorded inputs and
// exits, which writes the profile (.gcda) next to its objects.
//
// Usage: sbrp_train LIB INPUTS. INPUTS holds whole cycles of uint64_t input
// values, native byte order, in the port table's order. Knows no port: the
// counts come from the library (sbrp_pb_abi).

#include <dlfcn.h>

#include <cstdint>
#include <cstdio>
#include <vector>

typedef uint32_t (*AbiFn)(uint32_t*, uint32_t*);
typedef void* (*CreateFn)();
typedef void (*DestroyFn)(void*);
typedef void (*StepFn)(void*, const uint64_t*, uint64_t*);

int main(int argc, char** argv) {
    if (argc != 3) {
        std::fprintf(stderr, "usage: %s LIB INPUTS\n", argv[0]);
        return 2;
    }
    void* lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        std::fprintf(stderr, "sbrp_train: %s\n", dlerror());
        return 1;
    }
    AbiFn abi = (AbiFn)dlsym(lib, "sbrp_pb_abi");
    CreateFn create = (CreateFn)dlsym(lib, "sbrp_pb_create");
    DestroyFn destroy = (DestroyFn)dlsym(lib, "sbrp_pb_destroy");
    StepFn step = (StepFn)dlsym(lib, "sbrp_pb_step");
    if (!abi || !create || !destroy || !step) {
        std::fprintf(stderr, "sbrp_train: shim symbol missing\n");
        return 1;
    }
    uint32_t n_in = 0, n_out = 0;
    abi(&n_in, &n_out);

    std::FILE* f = std::fopen(argv[2], "rb");
    if (!f) {
        std::perror("sbrp_train: inputs");
        return 1;
    }
    std::vector<uint64_t> in;
    uint64_t buf[4096];
    size_t n;
    while ((n = std::fread(buf, sizeof buf[0], 4096, f)) > 0) in.insert(in.end(), buf, buf + n);
    std::fclose(f);
    if (n_in == 0 || in.size() % n_in != 0) {
        std::fprintf(stderr, "sbrp_train: inputs are not whole cycles of %u ports\n", n_in);
        return 1;
    }

    std::vector<uint64_t> out(n_out);
    void* m = create();
    for (size_t c = 0; c < in.size(); c += n_in) step(m, &in[c], out.data());
    destroy(m);
    // The profile is written when the library's destructors run at exit.
    return 0;
}
