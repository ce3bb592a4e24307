// llama.cpp's own tokens, greedy answers and log-probabilities for a list
// of prompts, to hold codecal's local backend against (tests/generate_qwen.rs
// reads what tests/llama_cpp_expected.sh keeps of it).
// Usage: llama-greedy MODEL.gguf PROMPTS.bin N_DECODE THREADS
// PROMPTS.bin holds the prompts' texts, each ended by a NUL byte. Prints one
// JSON object per prompt and line: "ids" (the prompt's ids, control tokens
// matched whole, no BOS), "generated" (greedy ids until an end-of-generation
// token or N_DECODE), and "logprobs" (each generated id's log-softmax, in
// double precision, from the logits llama.cpp gave at that step).
#include "llama.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

int main(int argc, char ** argv) {
    if (argc != 5) {
        fprintf(stderr, "usage: %s MODEL.gguf PROMPTS.bin N_DECODE THREADS\n", argv[0]);
        return 2;
    }
    std::ifstream file(argv[2], std::ios::binary);
    const std::string all((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
    const int n_decode = atoi(argv[3]);
    const int threads = atoi(argv[4]);

    llama_backend_init();
    llama_log_set([](ggml_log_level, const char *, void *) {}, nullptr);
    llama_model * model = llama_model_load_from_file(argv[1], llama_model_default_params());
    if (!model) { fprintf(stderr, "cannot load %s\n", argv[1]); return 1; }
    const llama_vocab * vocab = llama_model_get_vocab(model);
    const int n_vocab = llama_vocab_n_tokens(vocab);

    size_t start = 0;
    while (start < all.size()) {
        size_t end = all.find('\0', start);
        if (end == std::string::npos) end = all.size();
        const std::string prompt = all.substr(start, end - start);
        start = end + 1;
        std::vector<llama_token> ids(prompt.size() + 16);
        const int n = llama_tokenize(vocab, prompt.c_str(), prompt.size(), ids.data(), ids.size(), false, true);
        if (n < 0) { fprintf(stderr, "tokenize failed\n"); return 1; }
        ids.resize(n);
        if (n_decode == 0) {
            // Ids only: no pass over the prompt.
            printf("{\"ids\": [");
            for (int i = 0; i < n; i++) printf(i ? ",%d" : "%d", ids[i]);
            printf("], \"generated\": [], \"logprobs\": []}\n");
            continue;
        }

        llama_context_params params = llama_context_default_params();
        params.n_ctx = n + n_decode + 8;
        params.n_batch = n;
        params.n_ubatch = n;
        params.n_threads = threads;
        params.n_threads_batch = threads;
        llama_context * ctx = llama_init_from_model(model, params);
        std::vector<llama_token> prompt_ids = ids;
        if (llama_decode(ctx, llama_batch_get_one(prompt_ids.data(), n)) != 0) { fprintf(stderr, "prefill failed\n"); return 1; }
        std::vector<llama_token> generated;
        std::vector<double> logprobs;
        for (int i = 0; i < n_decode; i++) {
            const float * logits = llama_get_logits_ith(ctx, -1);
            llama_token next = 0;
            for (int v = 1; v < n_vocab; v++) if (logits[v] > logits[next]) next = v;
            if (llama_vocab_is_eog(vocab, next)) break;
            double sum = 0.0;
            for (int v = 0; v < n_vocab; v++) sum += std::exp((double) logits[v] - logits[next]);
            generated.push_back(next);
            logprobs.push_back(-std::log(sum));
            if (llama_decode(ctx, llama_batch_get_one(&generated.back(), 1)) != 0) { fprintf(stderr, "decode failed\n"); return 1; }
        }
        printf("{\"ids\": [");
        for (int i = 0; i < n; i++) printf(i ? ",%d" : "%d", ids[i]);
        printf("], \"generated\": [");
        for (size_t i = 0; i < generated.size(); i++) printf(i ? ",%d" : "%d", generated[i]);
        printf("], \"logprobs\": [");
        for (size_t i = 0; i < logprobs.size(); i++) printf(i ? ",%.9g" : "%.9g", logprobs[i]);
        printf("]}\n");
        fflush(stdout);
        llama_free(ctx);
    }
    llama_model_free(model);
    return 0;
}
