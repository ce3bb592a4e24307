// Times llama.cpp on one GGUF: prefill of a prompt in one batch, then greedy
// decoding one token at a time. The same measurements as codecal's generate
// bench, through llama.cpp's C API (its llama-bench is not in the crate).
// Usage: llama-timing MODEL.gguf PROMPT.txt N_DECODE THREADS
// Prints one JSON object; "ids" are the prompt's token ids, so the caller
// can check that both tokenizers agree. Each rate is the best over both
// flash-attention settings, and the JSON says which setting gave it:
// llama.cpp's default (auto) turns it on for a CPU, llama-cpp-python's
// leaves it off, and on the project's 2-core machine with Qwen 0.5B the best
// prefill came with it and the best decoding without it.
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

    const int n_vocab = llama_vocab_n_tokens(vocab);
    double best_prefill = 1e9, best_decode = 1e9;
    bool prefill_fa = false, decode_fa = false;
    for (const bool flash_attn : {true, false}) {
        llama_context_params params = llama_context_default_params();
        params.n_ctx = n + n_decode + 8;
        params.n_batch = n;
        params.n_ubatch = n;
        params.n_threads = threads;
        params.n_threads_batch = threads;
        params.flash_attn_type = flash_attn ? LLAMA_FLASH_ATTN_TYPE_ENABLED : LLAMA_FLASH_ATTN_TYPE_DISABLED;
        llama_context * ctx = llama_init_from_model(model, params);
        if (!ctx) { fprintf(stderr, "cannot make a context\n"); return 1; }
        for (int run = 0; run < 3; run++) {
            llama_memory_clear(llama_get_memory(ctx), true);
            std::vector<llama_token> prompt_ids = ids;
            auto start = std::chrono::steady_clock::now();
            if (llama_decode(ctx, llama_batch_get_one(prompt_ids.data(), n)) != 0) { fprintf(stderr, "prefill failed\n"); return 1; }
            const double prefill = seconds_since(start);
            if (prefill < best_prefill) { best_prefill = prefill; prefill_fa = flash_attn; }
            start = std::chrono::steady_clock::now();
            for (int i = 0; i < n_decode; i++) {
                const float * logits = llama_get_logits_ith(ctx, -1);
                llama_token next = 0;
                for (int v = 1; v < n_vocab; v++) if (logits[v] > logits[next]) next = v;
                if (llama_decode(ctx, llama_batch_get_one(&next, 1)) != 0) { fprintf(stderr, "decode failed\n"); return 1; }
            }
            const double decode = seconds_since(start);
            if (decode < best_decode) { best_decode = decode; decode_fa = flash_attn; }
        }
        llama_free(ctx);
    }
    printf("{\"prompt_tokens\": %d, \"prefill_tokens_per_s\": %.3f, \"decode_tokens_per_s\": %.3f, "
           "\"prefill_flash_attn\": %s, \"decode_flash_attn\": %s, \"ids\": [", n,
           n / best_prefill, n_decode / best_decode, prefill_fa ? "true" : "false", decode_fa ? "true" : "false");
    for (int i = 0; i < n; i++) printf(i ? ",%d" : "%d", ids[i]);
    printf("]}\n");
    llama_model_free(model);
    return 0;
}
