/* libwaste C API: a small, stable surface over the C++ API (waste.hpp) for embedding
 * the engine in C, or in any language with a C foreign-function interface.
 *
 * Rules:
 * - C99 header; no C++ type crosses it. Handles are opaque; every struct the caller fills
 *   has an _init() that sets the defaults.
 * - Functions return waste_status (0 = WASTE_OK). Nothing is printed and nothing exits:
 *   on failure waste_last_error() gives a one-line message naming the file, record or
 *   argument at fault (per calling thread; also kept per model in waste_error_detail()).
 * - A waste_model is one open container plus one session (a conversation). It is not
 *   thread-safe: one thread drives it. Only waste_cancel() may be called from another
 *   thread while a call is running.
 * - Strings are UTF-8. Pointers the library returns stay valid as documented at each
 *   function; the caller never frees them.
 */
#ifndef WASTE_H
#define WASTE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum waste_status {
    WASTE_OK = 0,
    WASTE_E_IO = -1,          /* missing file, short read, failed checksum */
    WASTE_E_FORMAT = -2,      /* damaged or unsupported container contents */
    WASTE_E_RAM_BUDGET = -3,  /* budget below the floor the container needs */
    WASTE_E_OOM = -4,         /* an allocation failed */
    WASTE_E_ARG = -5,         /* bad argument: null pointer, out-of-range id, short buffer, full context */
    WASTE_E_UNSUPPORTED = -6, /* the container lacks what was asked (no tokenizer, ...) */
    WASTE_E_CANCELLED = -7,   /* waste_cancel(), or a callback returned non-zero */
    WASTE_E_INTERNAL = -8     /* an unexpected failure inside the engine (message says what) */
} waste_status;

typedef struct waste_model waste_model;

/* ---- version and errors ---------------------------------------------------------- */

const char *waste_version(void);        /* "0.1.0" */
int waste_version_number(void);         /* MAJOR*10000 + MINOR*100 + PATCH */
const char *waste_build_info(void);     /* "WASTE Studio 0.1.0 (container v0, x86_64)" */
const char *waste_strerror(waste_status status); /* "I/O error", ... */
/* The message of the last failed call made by this thread ("" when none failed yet).
 * Valid until the next failing call on this thread. */
const char *waste_last_error(void);
/* The message of the last failed call on this model ("" when none). Valid until the next
 * call on the model. */
const char *waste_error_detail(const waste_model *model);

/* Parses "8G", "512M", "1024K" or a byte count. */
waste_status waste_parse_size(const char *text, int64_t *bytes_out);

/* ---- planning (reads the manifest only) ----------------------------------------------- */

typedef struct waste_memplan {
    int64_t ctx_tokens;
    int64_t trunk_bytes;
    int64_t state_bytes;
    int64_t scratch_bytes;
    int64_t min_expert_cache;
    int64_t vision_bytes;
    int64_t floor_bytes;       /* a budget below this is refused */
    int64_t recommended_bytes; /* the budget the engine picks when given 0 */
    int64_t working_set_bytes; /* one token's expert records */
    int64_t physical_ram_bytes;
    int64_t usable_ram_bytes;
    int64_t cliff_bytes;       /* budgets above this are likely to page */
} waste_memplan;

waste_status waste_plan_memory(const char *container_path, int ctx_tokens, waste_memplan *plan_out);
/* The bytes a model opened at a budget its caller chose sets aside for its state checkpoint
 * (the conversation state kept for the next turn), taken from the expert cache: what a
 * budget must add to hold every expert besides it. A function of its own rather than a
 * waste_memplan field, so the struct's size stays what callers were compiled with. */
waste_status waste_plan_checkpoint(const char *container_path, int ctx_tokens, int64_t *bytes_out);

/* ---- open / close ------------------------------------------------------------------ */

typedef struct waste_open_options {
    int64_t ram_budget_bytes; /* 0: the engine chooses (default) */
    int ctx_tokens;           /* hard bound on positions (4096) */
    int threads;              /* compute threads; 0: one per core */
    int direct_io;            /* bypass the page cache for expert reads (1) */
    int verify_records;       /* crc32 of every expert payload read (0) */
    int expert_cache;         /* 0: read every expert from disk every time (1) */
    int read_ahead;           /* (1) */
    int lookahead;            /* router lookahead (1) */
} waste_open_options;

void waste_open_options_init(waste_open_options *options);
/* options may be NULL (defaults). On failure *model_out is NULL. */
waste_status waste_open(const char *container_path, const waste_open_options *options, waste_model **model_out);
/* NULL is accepted. */
void waste_close(waste_model *model);

typedef struct waste_model_info {
    const char *arch;         /* "kimi-linear", "kimi-k3"; valid while the model is open */
    const char *quantization; /* "experts VQ3R, trunk Q4G/Q8G/F32" */
    int layers, experts, top_k, hidden, vocab, ctx_max;
    int64_t params_total, params_active;
    int64_t budget_bytes, expert_cache_bytes;
    int32_t bos_id, eos_id;   /* -1 when the model has none */
} waste_model_info;

waste_status waste_model_get_info(const waste_model *model, waste_model_info *info_out);
/* The plan the model was opened with. */
waste_status waste_model_memory_plan(const waste_model *model, waste_memplan *plan_out);

/* ---- tokenizer ----------------------------------------------------------------------- */

/* Plain text (markup = 0): special markers stay ordinary text. markup = 1 resolves the
 * container's specials (for chat templates). Writes up to `capacity` ids; *n_out receives
 * the full count, and WASTE_E_ARG is returned when it exceeds capacity (call again). */
waste_status waste_tokenize(waste_model *model, const char *text, size_t text_len, int markup, int32_t *ids_out,
                            size_t capacity, size_t *n_out);
/* Writes the UTF-8 text of ids, NUL-terminated, into buf. *len_out receives the length
 * without the NUL; WASTE_E_ARG when buf is too small (len_out then says what it needs). */
waste_status waste_detokenize(waste_model *model, const int32_t *ids, size_t n, char *buf, size_t capacity,
                              size_t *len_out);

/* ---- evaluation ------------------------------------------------------------------ */

/* Feeds tokens into the session (chunked prefill) and returns the logits after the last.
 * *logits_out points at `*vocab_out` floats owned by the model, valid until the next call
 * that evaluates or changes the state. n = 0 returns the current logits. */
waste_status waste_eval(waste_model *model, const int32_t *tokens, size_t n, const float **logits_out,
                        int *vocab_out);

typedef struct waste_top_token {
    int32_t id;
    float logit;
    double prob; /* softmax over the whole vocabulary, in double */
} waste_top_token;

/* The k largest logits, largest first, equal logits lowest id first (as `waste eval`).
 * Writes min(k, vocab) entries; *n_out receives that count. */
waste_status waste_top_tokens(const float *logits, int vocab, int k, waste_top_token *top_out, int *n_out);

/* ---- generation ------------------------------------------------------------------ */

typedef struct waste_stats {
    int64_t tokens_generated;
    int64_t tokens_prefilled;
    int64_t experts_hit;      /* demand hits in the expert cache */
    int64_t experts_missed;   /* demand misses (read from disk) */
    int64_t bytes_read;
    int64_t speculative_fills;
    double sec_total;
    double sec_io_wait;
    int direct_io;            /* 1 only when every bank bypasses the page cache */
} waste_stats;

waste_status waste_get_stats(const waste_model *model, waste_stats *stats_out);

typedef struct waste_gen_params {
    float temperature;                /* 0: greedy (default) */
    float top_p;                      /* 1.0 */
    int top_k;                        /* 0: off */
    uint64_t seed;                    /* same seed, same text */
    int max_tokens;                   /* 256 */
    const char *const *stop_strings;  /* n_stop_strings NUL-terminated strings; may be NULL */
    int n_stop_strings;
    const int32_t *stop_tokens;       /* EOS always stops */
    int n_stop_tokens;
} waste_gen_params;

void waste_gen_params_init(waste_gen_params *params);

typedef struct waste_token_event {
    int index;          /* 0-based index of the generated token */
    int32_t token;
    const char *text;   /* UTF-8 this token completes, NUL-terminated (may be "" mid-codepoint) */
    size_t text_len;
    float logprob;
    waste_stats stats;  /* cumulative: a host can show cache hits and reads per token */
} waste_token_event;

/* Called after every generated token; return non-zero to stop (waste_generate then
 * returns WASTE_E_CANCELLED with the result filled). The event lives during the call. */
typedef int (*waste_token_callback)(const waste_token_event *event, void *user);

typedef enum waste_finish {
    WASTE_FINISH_STOP = 0,      /* EOS, stop token or stop string */
    WASTE_FINISH_LENGTH = 1,    /* max_tokens */
    WASTE_FINISH_CANCELLED = 2,
    WASTE_FINISH_CONTEXT_FULL = 3
} waste_finish;

typedef struct waste_gen_result {
    const char *text;   /* the whole reply, NUL-terminated; owned by the model, valid until the next generate */
    size_t text_len;
    int n_tokens;       /* generated tokens */
    int prompt_tokens;
    waste_finish finish;
    waste_stats stats;
} waste_gen_result;

/* Feeds the prompt (n may be 0 to continue the session) and samples until a stop.
 * callback and result_out may be NULL. */
waste_status waste_generate(waste_model *model, const int32_t *prompt, size_t n, const waste_gen_params *params,
                            waste_token_callback callback, void *user, waste_gen_result *result_out);

/* Thread-safe: makes the running eval/generate stop at the next token or chunk. */
void waste_cancel(waste_model *model);

/* ---- session state ----------------------------------------------------------------- */

int waste_position(const waste_model *model); /* tokens in the session; -1 for NULL */
waste_status waste_state_save(waste_model *model, const char *path);
waste_status waste_state_load(waste_model *model, const char *path);
waste_status waste_state_reset(waste_model *model);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* WASTE_H */
