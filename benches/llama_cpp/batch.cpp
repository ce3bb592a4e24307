// Generates greedy answers to many prompts with llama.cpp, PARALLEL of them in
// flight at once (continuous batching through the C API: one llama_decode per
// step carries every sequence's next token, and a finished sequence's slot
// takes the next prompt's prefill in the following step, as llama.cpp's
// server does with PARALLEL slots). The baseline for the aggregate rows of
// codecal's generate bench.
// Usage: llama-batch MODEL.gguf PROMPT_IDS.txt MAX_TOKENS PARALLEL THREADS FLASH_ATTN
// FLASH_ATTN is on or off (the bench runs both and keeps the faster: on this
// CPU flash attention speeds prefill and slows decoding).
// PROMPT_IDS.txt holds one prompt per line as space-separated token ids (the
// ids codecal's tokenizer gives, so both engines see the same input). A
// sequence ends at an end-of-generation token, at a token whose text holds a
// newline (the main job's stop string), or after MAX_TOKENS. Like codecal, it
// takes each chosen token's log-probability (a log-softmax over the vocabulary).
// Prints one JSON object: seconds (from the first prefill to the last
// token), token counts, and each prompt's generated ids in input order.
#include "llama.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

struct Slot {
    int prompt = -1;  // index into prompts; -1 when idle
    bool prefilled = false;
    int position = 0;
    int logits_index = -1;
    llama_token next = 0;
};

static std::vector<std::vector<llama_token>> read_prompts(const char * path) {
    std::ifstream file(path);
    std::vector<std::vector<llama_token>> prompts;
    std::string line;
    while (std::getline(file, line)) {
        std::istringstream ids(line);
        std::vector<llama_token> prompt;
        for (llama_token id; ids >> id;) prompt.push_back(id);
        if (!prompt.empty()) prompts.push_back(prompt);
    }
    return prompts;
}

static void add(llama_batch & batch, llama_token token, int position, int sequence, bool logits) {
    const int i = batch.n_tokens++;
    batch.token[i] = token;
    batch.pos[i] = position;
    batch.n_seq_id[i] = 1;
    batch.seq_id[i][0] = sequence;
    batch.logits[i] = logits;
}

static llama_token greedy(const float * logits, int n_vocab, double & logprob) {
    llama_token best = 0;
    for (int v = 1; v < n_vocab; v++) if (logits[v] > logits[best]) best = v;
    double sum = 0.0;
    for (int v = 0; v < n_vocab; v++) sum += std::exp(double(logits[v]) - logits[best]);
    logprob = -std::log(sum);
    return best;
}

int main(int argc, char ** argv) {
    if (argc != 7) {
        fprintf(stderr, "usage: %s MODEL.gguf PROMPT_IDS.txt MAX_TOKENS PARALLEL THREADS FLASH_ATTN\n", argv[0]);
        return 2;
    }
    const auto prompts = read_prompts(argv[2]);
    const int max_tokens = atoi(argv[3]);
    const int parallel = atoi(argv[4]);
    const int threads = atoi(argv[5]);
    if (prompts.empty() || max_tokens < 1 || parallel < 1 || threads < 1) {
        fprintf(stderr, "no prompts in %s, or a count below 1\n", argv[2]);
        return 2;
    }
    size_t longest = 0;
    for (const auto & p : prompts) longest = std::max(longest, p.size());

    llama_backend_init();
    llama_log_set([](ggml_log_level, const char *, void *) {}, nullptr);
    llama_model * model = llama_model_load_from_file(argv[1], llama_model_default_params());
    if (!model) { fprintf(stderr, "cannot load %s\n", argv[1]); return 1; }
    const llama_vocab * vocab = llama_model_get_vocab(model);
    const int n_vocab = llama_vocab_n_tokens(vocab);

    llama_context_params params = llama_context_default_params();
    const int per_sequence = int(longest) + max_tokens + 8;
    params.n_ctx = per_sequence * parallel;
    params.n_seq_max = parallel;
    params.n_batch = int(longest) * parallel + parallel;
    params.n_ubatch = params.n_batch;
    params.n_threads = threads;
    params.n_threads_batch = threads;
    params.flash_attn_type = std::string(argv[6]) == "on" ? LLAMA_FLASH_ATTN_TYPE_ENABLED : LLAMA_FLASH_ATTN_TYPE_DISABLED;
    llama_context * ctx = llama_init_from_model(model, params);
    if (!ctx) { fprintf(stderr, "cannot make a context for %d sequences\n", parallel); return 1; }
    llama_memory_t memory = llama_get_memory(ctx);
    llama_batch batch = llama_batch_init(params.n_batch, 0, 1);

    std::vector<std::vector<llama_token>> outputs(prompts.size());
    std::vector<Slot> slots(parallel);
    size_t next_prompt = 0, done = 0, generated = 0, prompt_tokens = 0;
    double logprob_sum = 0.0;
    auto start = std::chrono::steady_clock::now();
    while (done < prompts.size()) {
        batch.n_tokens = 0;
        for (int s = 0; s < parallel; s++) {
            Slot & slot = slots[s];
            if (slot.prompt < 0 && next_prompt < prompts.size()) {
                slot = Slot{};
                slot.prompt = int(next_prompt++);
            }
            if (slot.prompt < 0) continue;
            if (!slot.prefilled) {
                const auto & ids = prompts[slot.prompt];
                for (size_t i = 0; i < ids.size(); i++) add(batch, ids[i], int(i), s, i + 1 == ids.size());
                slot.position = int(ids.size());
                prompt_tokens += ids.size();
            } else {
                add(batch, slot.next, slot.position++, s, true);
            }
            slot.logits_index = batch.n_tokens - 1;
        }
        if (llama_decode(ctx, batch) != 0) { fprintf(stderr, "llama_decode failed\n"); return 1; }
        for (int s = 0; s < parallel; s++) {
            Slot & slot = slots[s];
            if (slot.prompt < 0) continue;
            slot.prefilled = true;
            double logprob = 0.0;
            const llama_token token = greedy(llama_get_logits_ith(ctx, slot.logits_index), n_vocab, logprob);
            auto & out = outputs[slot.prompt];
            bool finished = llama_vocab_is_eog(vocab, token);
            if (!finished) {
                out.push_back(token);
                generated++;
                logprob_sum += logprob;
                char piece[256];
                const int n = llama_token_to_piece(vocab, token, piece, sizeof piece, 0, true);
                finished = (n > 0 && std::string(piece, n).find('\n') != std::string::npos) ||
                           int(out.size()) >= max_tokens;
            }
            if (finished) {
                llama_memory_seq_rm(memory, s, -1, -1);
                slot.prompt = -1;
                done++;
            } else {
                slot.next = token;
            }
        }
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    printf("{\"seconds\": %.3f, \"prompt_tokens\": %zu, \"generated_tokens\": %zu, \"logprob_sum\": %.6f, \"outputs\": [",
           seconds, prompt_tokens, generated, logprob_sum);
    for (size_t p = 0; p < outputs.size(); p++) {
        printf(p ? ",[" : "[");
        for (size_t i = 0; i < outputs[p].size(); i++) printf(i ? ",%d" : "%d", outputs[p][i]);
        printf("]");
    }
    printf("]}\n");
    llama_batch_free(batch);
    llama_free(ctx);
    llama_model_free(model);
    return 0;
}
