/* The C API, from C: opens the reference container r3.waste, tokenizes and evaluates the
 * reference prompts and checks the top ids and logits against the reference engine's JSON,
 * generates twice with one seed (same text), streams tokens with cache statistics, saves
 * and reloads the session, and refuses bad input with readable one-line messages.
 * Compiled as C (this file is the proof that waste.h is a C header). */
#include "waste/waste.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int g_failures = 0;

#define CHECK(cond, ...)                                                                                              \
    do {                                                                                                              \
        if (!(cond)) {                                                                                                \
            ++g_failures;                                                                                             \
            fprintf(stderr, "%s:%d: CHECK(%s) failed: ", __FILE__, __LINE__, #cond);                                 \
            fprintf(stderr, __VA_ARGS__);                                                                             \
            fputc('\n', stderr);                                                                                      \
        }                                                                                                             \
    } while (0)

static const char *kDir = WASTE_FIXTURES_DIR "/reference-container/";

static char *readFile(const char *dir, const char *name)
{
    char path[1024];
    snprintf(path, sizeof path, "%s%s", dir, name);
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "cannot read %s\n", path);
        exit(2);
    }
    fseek(f, 0, SEEK_END);
    const long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    if (!s || fread(s, 1, (size_t)n, f) != (size_t)n)
        exit(2);
    s[n] = '\0';
    fclose(f);
    return s;
}

/* The numbers after each occurrence of `key` in `json`, in order (enough for the
 * fixtures' flat shapes: "ids":[...] or the "id"/"logit" fields of "top"). */
static int numbersAfter(const char *json, const char *key, double *out, int cap)
{
    int n = 0;
    const size_t klen = strlen(key);
    for (const char *p = strstr(json, key); p && n < cap; p = strstr(p + klen, key))
        out[n++] = strtod(p + klen, NULL);
    return n;
}

static int idList(const char *json, double *out, int cap)
{
    const char *p = strstr(json, "\"ids\":[");
    int n = 0;
    if (!p)
        return 0;
    p += 7;
    while (n < cap && *p && *p != ']') {
        char *end;
        out[n++] = strtod(p, &end);
        p = end;
        while (*p == ',' || *p == ' ')
            ++p;
    }
    return n;
}

static int noNewline(const char *s) { return strchr(s, '\n') == NULL; }

static void checkReference(waste_model *m, const char *name, const char *text)
{
    char file[256];
    snprintf(file, sizeof file, "r3.tok.%s.json", name);
    char *tokJson = readFile(kDir, file);
    snprintf(file, sizeof file, "r3.eval.%s.json", name);
    char *evalJson = readFile(kDir, file);

    double refIds[1024];
    const int nRef = idList(tokJson, refIds, 1024);
    int32_t ids[1024];
    size_t n = 0;
    waste_status st = waste_tokenize(m, text, strlen(text), 1, ids, 1024, &n);
    CHECK(st == WASTE_OK, "tokenize %s: %s", name, waste_last_error());
    CHECK((int)n == nRef, "%s: %zu tokens, reference %d", name, n, nRef);
    for (int i = 0; i < nRef && i < (int)n; ++i)
        CHECK(ids[i] == (int32_t)refIds[i], "%s: id %d is %d, reference %d", name, i, ids[i], (int)refIds[i]);

    CHECK(waste_state_reset(m) == WASTE_OK, "reset");
    const float *logits = NULL;
    int vocab = 0;
    st = waste_eval(m, ids, n, &logits, &vocab);
    CHECK(st == WASTE_OK && logits, "eval %s: %s", name, waste_last_error());
    double vocabRef[1];
    numbersAfter(evalJson, "\"vocab\":", vocabRef, 1);
    CHECK(vocab == (int)vocabRef[0], "%s: vocab %d, reference %d", name, vocab, (int)vocabRef[0]);
    CHECK(waste_position(m) == (int)n, "%s: position %d after %zu tokens", name, waste_position(m), n);

    double topIds[10], topLogits[10];
    const int nTop = numbersAfter(evalJson, "\"id\":", topIds, 10);
    numbersAfter(evalJson, "\"logit\":", topLogits, 10);
    CHECK(nTop == 10, "%s: reference has %d top entries", name, nTop);
    waste_top_token top[10];
    int got = 0;
    if (logits) {
        CHECK(waste_top_tokens(logits, vocab, 10, top, &got) == WASTE_OK, "top: %s", waste_last_error());
        CHECK(got == 10, "%s: %d top tokens", name, got);
        for (int i = 0; i < got && i < nTop; ++i) {
            CHECK(top[i].id == (int32_t)topIds[i], "%s rank %d: id %d, reference %d", name, i, top[i].id,
                  (int)topIds[i]);
            CHECK(fabs(top[i].logit - topLogits[i]) <= 1e-3, "%s rank %d: logit %f, reference %f", name, i,
                  top[i].logit, topLogits[i]);
        }
    }
    free(tokJson);
    free(evalJson);
}

struct Streamed {
    int events;
    int lastIndex;
    int64_t lookups; /* hits + misses seen by the last event */
    char text[4096];
    int stopAfter;   /* 0: never */
};

static int onToken(const waste_token_event *ev, void *user)
{
    struct Streamed *s = user;
    CHECK(ev->index == s->events, "event index %d, expected %d", ev->index, s->events);
    CHECK(ev->text != NULL && strlen(ev->text) == ev->text_len, "event text");
    if (strlen(s->text) + ev->text_len < sizeof s->text)
        strcat(s->text, ev->text);
    s->lookups = ev->stats.experts_hit + ev->stats.experts_missed;
    s->lastIndex = ev->index;
    ++s->events;
    return s->stopAfter > 0 && s->events >= s->stopAfter;
}

static void checkGenerate(waste_model *m)
{
    int32_t prompt[64];
    size_t n = 0;
    const char *text = "The quick brown fox";
    CHECK(waste_tokenize(m, text, strlen(text), 1, prompt, 64, &n) == WASTE_OK, "tokenize: %s", waste_last_error());

    waste_gen_params gp;
    waste_gen_params_init(&gp);
    gp.temperature = 0.9f;
    gp.top_p = 0.95f;
    gp.seed = 1234;
    gp.max_tokens = 24;

    char first[4096] = "";
    for (int run = 0; run < 2; ++run) {
        struct Streamed s;
        memset(&s, 0, sizeof s);
        waste_gen_result r;
        CHECK(waste_state_reset(m) == WASTE_OK, "reset");
        const waste_status st = waste_generate(m, prompt, n, &gp, onToken, &s, &r);
        CHECK(st == WASTE_OK, "generate: %s", waste_last_error());
        CHECK(r.n_tokens == s.events && r.n_tokens > 0, "%d tokens, %d events", r.n_tokens, s.events);
        CHECK(r.prompt_tokens == (int)n, "prompt tokens %d", r.prompt_tokens);
        CHECK(strcmp(r.text, s.text) == 0, "reply '%s' differs from the streamed '%s'", r.text, s.text);
        CHECK(s.lookups > 0, "the token events carry no cache statistics");
        CHECK(r.stats.tokens_generated > 0, "stats");
        if (run == 0)
            snprintf(first, sizeof first, "%s", r.text);
        else
            CHECK(strcmp(first, r.text) == 0, "same seed, different text: '%s' vs '%s'", first, r.text);
    }
    CHECK(strlen(first) > 0, "empty reply");

    /* A callback that returns non-zero stops the generation. */
    struct Streamed s;
    memset(&s, 0, sizeof s);
    s.stopAfter = 3;
    waste_gen_result r;
    CHECK(waste_state_reset(m) == WASTE_OK, "reset");
    gp.max_tokens = 20;
    const waste_status st = waste_generate(m, prompt, n, &gp, onToken, &s, &r);
    CHECK(st == WASTE_E_CANCELLED, "stopped generate returned %d", st);
    CHECK(r.finish == WASTE_FINISH_CANCELLED && r.n_tokens == 3, "finish %d after %d tokens", r.finish, r.n_tokens);
}

static void checkState(waste_model *m)
{
    const int32_t prompt[] = {72, 101, 108, 108, 111};
    const int32_t next = 280;
    const char *path = WASTE_TEST_OUTPUT_DIR "/capi-state.bin";
    const float *logits = NULL;
    int vocab = 0;
    CHECK(waste_state_reset(m) == WASTE_OK, "reset");
    CHECK(waste_eval(m, prompt, 5, &logits, &vocab) == WASTE_OK, "eval: %s", waste_last_error());
    CHECK(waste_state_save(m, path) == WASTE_OK, "save: %s", waste_last_error());
    CHECK(waste_eval(m, &next, 1, &logits, &vocab) == WASTE_OK, "eval: %s", waste_last_error());
    float *straight = malloc(sizeof(float) * (size_t)vocab);
    memcpy(straight, logits, sizeof(float) * (size_t)vocab);
    CHECK(waste_state_reset(m) == WASTE_OK && waste_position(m) == 0, "reset");
    CHECK(waste_state_load(m, path) == WASTE_OK, "load: %s", waste_last_error());
    CHECK(waste_position(m) == 5, "position %d after load", waste_position(m));
    CHECK(waste_eval(m, &next, 1, &logits, &vocab) == WASTE_OK, "eval: %s", waste_last_error());
    CHECK(memcmp(straight, logits, sizeof(float) * (size_t)vocab) == 0, "loaded state continues differently");
    free(straight);
    remove(path);
}

static void checkErrors(void)
{
    waste_model *m = (waste_model *)&m; /* must be reset to NULL on failure */
    waste_status st = waste_open("/nonexistent/model.waste", NULL, &m);
    CHECK(st == WASTE_E_IO && m == NULL, "missing container: status %d", st);
    CHECK(strstr(waste_last_error(), "/nonexistent/model.waste") && noNewline(waste_last_error()), "message '%s'",
          waste_last_error());

    char path[1024];
    snprintf(path, sizeof path, "%sr3.waste", kDir);
    waste_open_options o;
    waste_open_options_init(&o);
    o.ram_budget_bytes = 4096;
    st = waste_open(path, &o, &m);
    CHECK(st == WASTE_E_RAM_BUDGET && m == NULL, "tiny budget: status %d", st);
    CHECK(strstr(waste_last_error(), "floor") && noNewline(waste_last_error()), "message '%s'", waste_last_error());
    o.ram_budget_bytes = -5;
    CHECK(waste_open(path, &o, &m) == WASTE_E_ARG && m == NULL, "negative budget: %s", waste_last_error());
    waste_open_options_init(&o);
    o.threads = -1;
    CHECK(waste_open(path, &o, &m) == WASTE_E_ARG, "negative threads");
    CHECK(waste_open(NULL, NULL, &m) == WASTE_E_ARG && strstr(waste_last_error(), "container_path"), "NULL path");
    CHECK(waste_open(path, NULL, NULL) == WASTE_E_ARG, "NULL out");

    int64_t bytes = 0;
    CHECK(waste_parse_size("512M", &bytes) == WASTE_OK && bytes == 512LL * 1024 * 1024, "512M = %lld", (long long)bytes);
    CHECK(waste_parse_size("12Q", &bytes) == WASTE_E_ARG && strlen(waste_last_error()) > 0, "bad size");

    waste_memplan plan;
    CHECK(waste_plan_memory(path, 4096, &plan) == WASTE_OK && plan.floor_bytes > 0, "plan: %s", waste_last_error());
    CHECK(waste_plan_memory("/nonexistent/x.waste", 4096, &plan) != WASTE_OK, "plan of a missing container");

    /* The checkpoint: a budget the caller chooses gives the expert cache what is left past
     * the floor, less one checkpoint (engine/src/plan/budget.cpp). */
    int64_t checkpoint = 0;
    CHECK(waste_plan_checkpoint(path, 4096, &checkpoint) == WASTE_OK && checkpoint > 0, "checkpoint: %s",
          waste_last_error());
    CHECK(waste_plan_checkpoint(path, 0, &checkpoint) == WASTE_E_ARG && strstr(waste_last_error(), "context"),
          "checkpoint at ctx 0: %s", waste_last_error());
    CHECK(waste_plan_checkpoint(path, 4096, NULL) == WASTE_E_ARG && strstr(waste_last_error(), "bytes_out"),
          "checkpoint to NULL");
    CHECK(waste_plan_checkpoint("/nonexistent/x.waste", 4096, &checkpoint) != WASTE_OK, "checkpoint of a missing container");
    CHECK(waste_plan_checkpoint(path, 4096, &checkpoint) == WASTE_OK, "checkpoint again: %s", waste_last_error());
    waste_open_options_init(&o);
    o.ram_budget_bytes = plan.floor_bytes + checkpoint + (1 << 20);
    CHECK(waste_open(path, &o, &m) == WASTE_OK, "open past the floor: %s", waste_last_error());
    waste_model_info info;
    CHECK(waste_model_get_info(m, &info) == WASTE_OK, "info: %s", waste_last_error());
    CHECK(info.expert_cache_bytes == o.ram_budget_bytes - plan.floor_bytes + plan.min_expert_cache - checkpoint,
          "expert cache %lld, budget %lld, floor %lld, smallest cache %lld, checkpoint %lld",
          (long long)info.expert_cache_bytes, (long long)o.ram_budget_bytes, (long long)plan.floor_bytes,
          (long long)plan.min_expert_cache, (long long)checkpoint);
    waste_close(m);

    /* A model in hand: bad ids, short buffers, NULLs. */
    CHECK(waste_open(path, NULL, &m) == WASTE_OK, "open: %s", waste_last_error());
    const int32_t bad = 100000;
    const float *logits = NULL;
    int vocab = 0;
    st = waste_eval(m, &bad, 1, &logits, &vocab);
    CHECK(st == WASTE_E_ARG && strstr(waste_error_detail(m), "100000"), "out-of-range id: %d '%s'", st,
          waste_error_detail(m));
    CHECK(waste_eval(m, NULL, 0, &logits, &vocab) == WASTE_E_ARG, "eval of nothing on a fresh session");
    int32_t ids[2];
    size_t n = 0;
    const char *text = "a longer text than two tokens";
    st = waste_tokenize(m, text, strlen(text), 0, ids, 2, &n);
    CHECK(st == WASTE_E_ARG && n > 2, "short token buffer: status %d, n %zu", st, n);
    char small[2];
    size_t len = 0;
    const int32_t hello[] = {72, 101, 108, 108, 111};
    st = waste_detokenize(m, hello, 5, small, sizeof small, &len);
    CHECK(st == WASTE_E_ARG && len == 5, "short text buffer: status %d, len %zu", st, len);
    char buf[16];
    CHECK(waste_detokenize(m, hello, 5, buf, sizeof buf, &len) == WASTE_OK && strcmp(buf, "Hello") == 0, "'%s'", buf);
    CHECK(waste_generate(m, NULL, 0, NULL, NULL, NULL, NULL) == WASTE_E_ARG, "generate with nothing to continue");
    CHECK(waste_state_load(m, "/nonexistent/state.bin") != WASTE_OK && noNewline(waste_error_detail(m)),
          "load of a missing state");
    CHECK(waste_eval(NULL, hello, 5, &logits, &vocab) == WASTE_E_ARG, "NULL model");
    waste_close(m);
    waste_close(NULL);
}

int main(void)
{
    CHECK(strlen(waste_version()) > 0 && waste_version_number() > 0, "version");
    CHECK(strstr(waste_build_info(), waste_version()) != NULL, "build info '%s'", waste_build_info());
    CHECK(strcmp(waste_strerror(WASTE_E_IO), "I/O error") == 0, "strerror");

    char path[1024];
    snprintf(path, sizeof path, "%sr3.waste", kDir);
    waste_open_options o;
    waste_open_options_init(&o);
    waste_model *m = NULL;
    if (waste_open(path, &o, &m) != WASTE_OK) {
        fprintf(stderr, "open %s: %s\n", path, waste_last_error());
        return 1;
    }
    waste_model_info info;
    CHECK(waste_model_get_info(m, &info) == WASTE_OK && strcmp(info.arch, "kimi-linear") == 0, "info");
    checkReference(m, "hello", "Hello there");
    checkReference(m, "fox",
                   "The quick brown fox jumps over the lazy dog. The quick brown fox jumps over the lazy dog. "
                   "The quick brown fox jumps over the lazy dog. The quick brown fox jumps over the lazy dog. "
                   "The quick brown fox jumps over the lazy dog.");
    checkGenerate(m);
    checkState(m);
    waste_close(m);
    checkErrors();

    if (g_failures) {
        fprintf(stderr, "%d check(s) failed\n", g_failures);
        return 1;
    }
    printf("C API: all checks passed\n");
    return 0;
}
