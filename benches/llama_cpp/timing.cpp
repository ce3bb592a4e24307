// Times llama.cpp on one GGUF: prefill of a prompt in one batch, then greedy
// decoding one token at a time. The same measurements as codecal's generate
// bench, through llama.cpp's C API (its llama-bench is not in the crate).
// Usage: llama-timing MODEL.gguf PROMPT.txt N_DECODE THREADS
// Prints one JSON object; "ids" are the prompt's token ids, so the caller
// can check that both tokenizers agree.
#include "llama.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

static double seconds_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

int main(int argc, char ** argv) {
    if (argc != 5) {
        fprintf(stderr, "usage: %s MODEL.gguf PROMPT.txt N_DECODE THREADS\n", argv[0]);
        return 2;
    }
    std::ifstream file(argv[2]);
    std::stringstream text;
    text << file.rdbuf();
    const std::string prompt = text.str();
    const int n_decode = atoi(argv[3]);
    const int threads = atoi(argv[4]);

    llama_backend_init();
    llama_log_set([](ggml_log_level, const char *, void *) {}, nullptr);
    llama_model * model = llama_model_load_from_file(argv[1], llama_model_default_params());
    if (!model) { fprintf(stderr, "cannot load %s\n", argv[1]); return 1; }
    const llama_vocab * vocab = llama_model_get_vocab(model);
    std::vector<llama_token> ids(prompt.size() + 16);
    const int n = llama_tokenize(vocab, prompt.c_str(), prompt.size(), ids.data(), ids.size(), false, true);
    if (n < 0) { fprintf(stderr, "tokenize failed\n"); return 1; }
    ids.resize(n);

    llama_context_params params = llama_context_default_params();
    params.n_ctx = n + n_decode + 8;
    params.n_batch = n;
    params.n_ubatch = n;
    params.n_threads = threads;
    params.n_threads_batch = threads;
    llama_context * ctx = llama_init_from_model(model, params);
    const int n_vocab = llama_vocab_n_tokens(vocab);

    double best_prefill = 1e9, best_decode = 1e9;
    for (int run = 0; run < 3; run++) {
        llama_memory_clear(llama_get_memory(ctx), true);
        std::vector<llama_token> prompt_ids = ids;
        auto start = std::chrono::steady_clock::now();
        if (llama_decode(ctx, llama_batch_get_one(prompt_ids.data(), n)) != 0) { fprintf(stderr, "prefill failed\n"); return 1; }
        best_prefill = std::min(best_prefill, seconds_since(start));
        start = std::chrono::steady_clock::now();
        for (int i = 0; i < n_decode; i++) {
            const float * logits = llama_get_logits_ith(ctx, -1);
            llama_token next = 0;
            for (int v = 1; v < n_vocab; v++) if (logits[v] > logits[next]) next = v;
            if (llama_decode(ctx, llama_batch_get_one(&next, 1)) != 0) { fprintf(stderr, "decode failed\n"); return 1; }
        }
        best_decode = std::min(best_decode, seconds_since(start));
    }
    printf("{\"prompt_tokens\": %d, \"prefill_tokens_per_s\": %.3f, \"decode_tokens_per_s\": %.3f, \"ids\": [", n,
           n / best_prefill, n_decode / best_decode);
    for (int i = 0; i < n; i++) printf(i ? ",%d" : "%d", ids[i]);
    printf("]}\n");
    llama_free(ctx);
    llama_model_free(model);
    return 0;
}
