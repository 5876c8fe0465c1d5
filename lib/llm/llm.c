/* llm.c: the client's configuration (flags, environment, defaults), its
 * lifetime, and the accounting it leaves in records. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "llm/llmint.h"
#include "record.h"
#include "secrets.h"

#define DEFAULT_OPENAI_URL "https://api.openai.com/v1"
#define DEFAULT_ANTHROPIC_URL "https://api.anthropic.com"
#define DEFAULT_OPENAI_MODEL "gpt-4.1"
#define DEFAULT_ANTHROPIC_MODEL "claude-sonnet-4-5"
#define DEFAULT_AZURE_API_VERSION "2024-10-21"

void
geak_llm_config_init(struct geak_llm_config *cfg)
{
	memset(cfg, 0, sizeof *cfg);
	cfg->temperature = 1.0; /* GEAK samples every call at 1.0 */
	cfg->max_tokens = -1;
	cfg->jobs = 4;
	cfg->max_tokens_total = -1;
	cfg->max_cost = -1;
	cfg->max_attempts = 6;
	cfg->max_wait = 300;
	cfg->connect_timeout = 20;
	cfg->stall_timeout = 120;
	cfg->max_time = 1800;
	cfg->stream = 1;
}

int
geak_llm_option(struct geak_llm_config *cfg, int opt, const char *arg)
{
	switch (opt) {
	case GEAK_LLM_OPT_PROVIDER: cfg->provider = arg; break;
	case GEAK_LLM_OPT_MODEL: cfg->model = arg; break;
	case GEAK_LLM_OPT_BASE_URL: cfg->base_url = arg; break;
	case GEAK_LLM_OPT_API_KEY_ENV: cfg->api_key_env = arg; break;
	case GEAK_LLM_OPT_API_VERSION: cfg->api_version = arg; break;
	case GEAK_LLM_OPT_REASONING: cfg->reasoning_effort = arg; break;
	case GEAK_LLM_OPT_TEMPERATURE:
		cfg->temperature = geak_parse_double(arg, "--temperature", 0, 2);
		break;
	case GEAK_LLM_OPT_MAX_TOKENS:
		cfg->max_tokens = geak_parse_long(arg, "--max-tokens", 1, 10000000);
		break;
	case 'j':
		cfg->jobs = (int)geak_parse_long(arg, "-j", 1, 1024);
		break;
	case GEAK_LLM_OPT_RECORD: cfg->record_path = arg; break;
	case GEAK_LLM_OPT_REPLAY: cfg->replay_path = arg; break;
	case GEAK_LLM_OPT_JOURNAL: cfg->journal_path = arg; break;
	case GEAK_LLM_OPT_LEDGER: cfg->ledger_path = arg; break;
	case GEAK_LLM_OPT_MAX_TIME:
		cfg->max_time = geak_parse_double(arg, "--max-time", 1, 604800);
		break;
	case GEAK_LLM_OPT_MAX_TOKENS_TOTAL:
		cfg->max_tokens_total = geak_parse_long(arg, "--max-tokens-total", 0, LONG_MAX);
		break;
	case GEAK_LLM_OPT_MAX_COST:
		cfg->max_cost = geak_parse_double(arg, "--max-cost", 0, 1e12);
		break;
	case GEAK_LLM_OPT_PRICES: cfg->prices_path = arg; break;
	case GEAK_LLM_OPT_MAX_ATTEMPTS:
		cfg->max_attempts = (int)geak_parse_long(arg, "--max-attempts", 1, 100);
		break;
	case GEAK_LLM_OPT_MAX_WAIT:
		cfg->max_wait = geak_parse_double(arg, "--max-wait", 0, 86400);
		break;
	case GEAK_LLM_OPT_CONNECT_TIMEOUT:
		cfg->connect_timeout = geak_parse_double(arg, "--connect-timeout", 0.001, 3600);
		break;
	case GEAK_LLM_OPT_STALL_TIMEOUT:
		cfg->stall_timeout = geak_parse_double(arg, "--stall-timeout", 1, 86400);
		break;
	case GEAK_LLM_OPT_NO_STREAM: cfg->stream = 0; break;
	case GEAK_LLM_OPT_CHECK: cfg->check = 1; break;
	case GEAK_LLM_OPT_RESOLVE: cfg->resolve = 1; break;
	default:
		return 0;
	}
	return 1;
}

void
geak_llm_usage(FILE *fp)
{
	fputs("      --provider NAME     openai (default; any OpenAI-compatible server),\n"
	    "                          anthropic or azure; $GEAK_PROVIDER\n"
	    "      --model NAME        model (Azure: deployment); $GEAK_MODEL\n"
	    "      --base-url URL      endpoint base; $GEAK_BASE_URL, then the provider's\n"
	    "      --api-key-env NAME  read the key from variable NAME\n"
	    "      --api-version V     Azure API version\n"
	    "      --temperature T     sampling temperature, 0 to 2 (default 1.0)\n"
	    "      --max-tokens N      longest reply, in tokens\n"
	    "      --reasoning-effort E  low, medium or high, where the model has it\n"
	    "  -j, --jobs N            requests in flight at once (default 4)\n"
	    "      --record FILE       append every exchange to FILE (JSON Lines)\n"
	    "      --replay FILE       answer from FILE, no network; a miss is an error\n"
	    "      --journal FILE      answer from FILE what it holds, append every new\n"
	    "                          answer (a stopped run resumes without asking again)\n"
	    "      --max-tokens-total N  stop sending after N tokens in all\n"
	    "      --max-cost USD      stop sending after USD US dollars (see --prices)\n"
	    "      --ledger FILE       count the limits over every process given FILE\n"
	    "      --prices FILE       price table (default share/prices.tsv)\n"
	    "      --max-attempts N    attempts per request (default 6)\n"
	    "      --max-wait S        seconds of back-off per request (default 300)\n"
	    "      --connect-timeout S seconds to connect (default 20)\n"
	    "      --stall-timeout S   seconds without a byte before giving up (default 120)\n"
	    "      --max-time S        seconds a request may take in all (default 1800)\n"
	    "      --no-stream         ask for whole replies, not a stream\n"
	    "      --check             send one tiny request and report what works\n"
	    "      --resolve           print the provider, model and base URL chosen, as\n"
	    "                          JSON, and exit; no request is sent\n", fp);
}

json_t *
geak_llm_messages(const char *system, const char *user)
{
	json_t *m = json_array();

	if (system && json_array_append_new(m, json_pack("{s:s, s:s}", "role", "system",
	    "content", system)) < 0)
		geak_die(GEAK_EXIT_FATAL, "out of memory");
	if (json_array_append_new(m, json_pack("{s:s, s:s}", "role", "user",
	    "content", user ? user : "")) < 0)
		geak_die(GEAK_EXIT_FATAL, "out of memory");
	return m;
}

/* The first variable of a list that is set and not empty. */
static const char *
first_env(const char *const *names, const char **which)
{
	for (; *names; names++) {
		const char *v = getenv(*names);
		if (v && *v) {
			if (which)
				*which = *names;
			return v;
		}
	}
	return NULL;
}

static int
set_provider(struct geak_llm *llm, const char *name, const char *why)
{
	for (size_t i = 0; geak_llm_provider_names[i]; i++)
		if (!strcasecmp(name, geak_llm_provider_names[i])) {
			llm->provider = (enum geak_llm_provider)i;
			llm->provider_why = why;
			return 0;
		}
	geak_warn("unknown provider '%s' (want openai, anthropic or azure)", name);
	return -1;
}

static int
is_set(const char *name)
{
	const char *v = getenv(name);

	return v && *v;
}

/* Nothing names the provider: a base URL of one's own is a server that
 * speaks OpenAI's API (vLLM, llama.cpp, Ollama); a Claude model is
 * Anthropic's; else the provider whose key (or endpoint) is set, OpenAI
 * first. */
static int
resolve_provider(struct geak_llm *llm, const struct geak_llm_config *cfg)
{
	const char *name = cfg->provider, *model = cfg->model;

	if (name && *name)
		return set_provider(llm, name, "--provider");
	if (is_set("GEAK_PROVIDER"))
		return set_provider(llm, getenv("GEAK_PROVIDER"), "$GEAK_PROVIDER");
	if ((cfg->base_url && *cfg->base_url) || is_set("GEAK_BASE_URL"))
		return set_provider(llm, "openai", "a base URL was given");
	if (!model || !*model)
		model = getenv("GEAK_MODEL");
	if (model && !strncasecmp(model, "claude", 6))
		return set_provider(llm, "anthropic", "the model is Claude");
	if (is_set("OPENAI_API_KEY") || is_set("OPENAI_BASE_URL") || is_set("OPENAI_API_BASE"))
		return set_provider(llm, "openai", "$OPENAI_API_KEY or its base URL is set");
	if (is_set("ANTHROPIC_API_KEY") || is_set("ANTHROPIC_BASE_URL"))
		return set_provider(llm, "anthropic", "$ANTHROPIC_API_KEY or its base URL is set");
	if (is_set("AZURE_OPENAI_API_KEY") || is_set("AZURE_OPENAI_ENDPOINT"))
		return set_provider(llm, "azure", "$AZURE_OPENAI_API_KEY or its endpoint is set");
	return set_provider(llm, "openai", "the default");
}

static char *
strip_slash(const char *url)
{
	char *s = geak_xstrdup(url);
	size_t n = strlen(s);

	while (n && s[n - 1] == '/')
		s[--n] = '\0';
	return s;
}

static int
resolve_endpoint(struct geak_llm *llm, const struct geak_llm_config *cfg)
{
	static const char *const openai_env[] = {"OPENAI_BASE_URL", "OPENAI_API_BASE", NULL};
	static const char *const anthropic_env[] = {"ANTHROPIC_BASE_URL", NULL};
	static const char *const azure_env[] = {"AZURE_OPENAI_ENDPOINT", NULL};
	const char *const *env = llm->provider == GEAK_LLM_ANTHROPIC ? anthropic_env :
	    llm->provider == GEAK_LLM_AZURE ? azure_env : openai_env;
	const char *url = cfg->base_url && *cfg->base_url ? cfg->base_url : NULL;
	const char *v;

	if (!url && (v = getenv("GEAK_BASE_URL")) && *v)
		url = v;
	if (!url)
		url = first_env(env, NULL);
	if (!url && llm->provider == GEAK_LLM_AZURE && cfg->replay_path)
		url = "https://azure.invalid"; /* never contacted */
	if (!url && llm->provider == GEAK_LLM_AZURE) {
		geak_warn("azure needs an endpoint: --base-url or $AZURE_OPENAI_ENDPOINT");
		return -1;
	}
	if (!url)
		url = llm->provider == GEAK_LLM_ANTHROPIC ? DEFAULT_ANTHROPIC_URL :
		    DEFAULT_OPENAI_URL;
	llm->base_url = strip_slash(url);
	switch (llm->provider) {
	case GEAK_LLM_ANTHROPIC:
		/* The SDKs' base URL is the host; accept one ending in /v1 too. */
		llm->endpoint = geak_xasprintf("%s%s/messages", llm->base_url,
		    strlen(llm->base_url) >= 3 &&
		    !strcmp(llm->base_url + strlen(llm->base_url) - 3, "/v1") ? "" : "/v1");
		break;
	case GEAK_LLM_AZURE:
		llm->endpoint = geak_xasprintf("%s/openai/deployments/%s/chat/completions"
		    "?api-version=%s", llm->base_url, llm->model, llm->api_version);
		break;
	default:
		llm->endpoint = geak_xasprintf("%s/chat/completions", llm->base_url);
	}
	/* OpenAI's own API and Azure want max_completion_tokens (reasoning
	 * models refuse max_tokens); other servers know max_tokens. */
	llm->use_completion_tokens = llm->provider == GEAK_LLM_AZURE ||
	    strstr(llm->base_url, "://api.openai.com") != NULL;
	return 0;
}

static int
resolve_key(struct geak_llm *llm, const struct geak_llm_config *cfg)
{
	static const char *const openai_env[] = {"GEAK_API_KEY", "OPENAI_API_KEY",
	    "LLM_API_KEY", NULL};
	static const char *const anthropic_env[] = {"GEAK_API_KEY", "ANTHROPIC_API_KEY",
	    "LLM_API_KEY", NULL};
	static const char *const azure_env[] = {"GEAK_API_KEY", "AZURE_OPENAI_API_KEY",
	    "LLM_API_KEY", NULL};
	const char *const *env = llm->provider == GEAK_LLM_ANTHROPIC ? anthropic_env :
	    llm->provider == GEAK_LLM_AZURE ? azure_env : openai_env;
	const char *which = NULL, *key;

	if (cfg->api_key_env) {
		key = getenv(cfg->api_key_env);
		if (!key || !*key) {
			geak_warn("--api-key-env %s: the variable is not set", cfg->api_key_env);
			return -1;
		}
		which = cfg->api_key_env;
	} else {
		key = first_env(env, &which);
	}
	if (key) {
		llm->api_key = geak_xstrdup(key);
		llm->key_source = geak_xstrdup(which);
		/* A server may send the key back (an echoing proxy): what
		 * comes from it is redacted before it is printed or kept. */
		geak_secrets_hold(which, key);
	}
	return 0;
}

/* A base URL of the user's own (--base-url, $GEAK_BASE_URL) is a server
 * whose models are its own: with no model named, it is asked which it
 * has, never given another provider's default. */
static int
own_server(const struct geak_llm_config *cfg)
{
	return !cfg->replay_path &&
	    ((cfg->base_url && *cfg->base_url) || is_set("GEAK_BASE_URL"));
}

/* Each provider's default: a strong current model; an Azure deployment
 * has a name of its user's choosing; a server of the user's is asked
 * (discover_model, once the key is known). */
static int
resolve_model(struct geak_llm *llm, const struct geak_llm_config *cfg)
{
	const char *model = cfg->model && *cfg->model ? cfg->model : NULL;

	llm->model_why = "--model";
	if (!model && is_set("GEAK_MODEL"))
		model = getenv("GEAK_MODEL"), llm->model_why = "$GEAK_MODEL";
	if (!model && llm->provider == GEAK_LLM_AZURE && is_set("AZURE_OPENAI_DEPLOYMENT"))
		model = getenv("AZURE_OPENAI_DEPLOYMENT"), llm->model_why = "$AZURE_OPENAI_DEPLOYMENT";
	if (!model && llm->provider != GEAK_LLM_AZURE && own_server(cfg))
		return 0;
	if (!model && llm->provider != GEAK_LLM_AZURE)
		llm->model_why = "the provider's default";
	if (!model)
		model = llm->provider == GEAK_LLM_OPENAI ? DEFAULT_OPENAI_MODEL :
		    llm->provider == GEAK_LLM_ANTHROPIC ? DEFAULT_ANTHROPIC_MODEL : NULL;
	if (!model || !*model) {
		geak_warn("azure needs the deployment's name: give --model or set "
		    "GEAK_MODEL or AZURE_OPENAI_DEPLOYMENT");
		return -1;
	}
	llm->model = geak_xstrdup(model);
	return 0;
}

/* No model named for a server of the user's: its only model, or an
 * error that lists them or says why there is no list. */
static int
discover_model(struct geak_llm *llm)
{
	char *why;
	long status;
	json_t *ids, *id;
	size_t i, n;

	if (llm->model)
		return 0;
	if (!(ids = geak_llm_fetch_models(llm, &status, &why))) {
		geak_warn("no model named, and the server at %s did not list its models "
		    "(%s): name one with --model or GEAK_MODEL", llm->base_url, why);
		free(why);
		return -1;
	}
	n = json_array_size(ids);
	if (n == 1) {
		llm->model = geak_xstrdup(json_string_value(json_array_get(ids, 0)));
		llm->model_why = "the server's only model";
		json_decref(ids);
		return 0;
	}
	if (n == 0)
		geak_warn("no model named, and the server at %s lists none: name one with "
		    "--model or GEAK_MODEL", llm->base_url);
	else {
		struct geak_buf names = { 0 };
		json_array_foreach(ids, i, id)
			geak_buf_printf(&names, "%s%s", i ? ", " : "", json_string_value(id));
		geak_warn("no model named, and the server at %s has %zu: %s; name one with "
		    "--model or GEAK_MODEL", llm->base_url, n, names.data);
		geak_buf_free(&names);
	}
	json_decref(ids);
	return -1;
}

static int
resolve_options(struct geak_llm *llm, const struct geak_llm_config *cfg)
{
	const char *v;

	v = cfg->api_version ? cfg->api_version : getenv("OPENAI_API_VERSION");
	llm->api_version = geak_xstrdup(v && *v ? v : DEFAULT_AZURE_API_VERSION);
	if (cfg->reasoning_effort && *cfg->reasoning_effort)
		llm->reasoning_effort = geak_xstrdup(cfg->reasoning_effort);
	llm->temperature = cfg->temperature;
	llm->max_tokens = cfg->max_tokens;
	return 0;
}

/* Every call's cost goes into its record, so the table is always read:
 * the shipped one may be missing (a model without a price costs null),
 * a table that was named may not, nor may a budget lack a price. */
static int
load_prices(struct geak_llm *llm, const struct geak_llm_config *cfg)
{
	char *path = cfg->prices_path ? geak_xstrdup(cfg->prices_path) :
	    geak_share_path(NULL, ".", "prices.tsv");
	int rc = 0;

	if (cfg->prices_path || access(path, R_OK) == 0)
		rc = geak_llm_price_load(path, geak_llm_provider_name(llm), llm->model, &llm->price);
	if (rc == 0 && cfg->max_cost >= 0 && !llm->price.known) {
		geak_warn("--max-cost: %s has no price for %s model %s, so its cost cannot be "
		    "counted: add a line for it, or limit the run with --max-tokens-total", path,
		    geak_llm_provider_name(llm), llm->model);
		rc = -1;
	}
	free(path);
	return rc;
}

static void
describe(const struct geak_llm *llm)
{
	geak_warn("llm: %s (%s) model %s at %s", geak_llm_provider_name(llm), llm->provider_why,
	    llm->model, llm->cfg.replay_path ? "(replay: no network)" : llm->endpoint);
	if (!llm->cfg.replay_path)
		geak_warn("llm: key %s%s", llm->key_source ? "from $" : "none (no auth header sent)",
		    llm->key_source ? llm->key_source : "");
	if (llm->cfg.replay_path)
		geak_warn("llm: replaying %s", llm->cfg.replay_path);
	if (llm->cfg.record_path)
		geak_warn("llm: recording to %s", llm->cfg.record_path);
	if (llm->cfg.journal_path && !llm->cfg.replay_path)
		geak_warn("llm: journal %s (%zu answers kept)", llm->cfg.journal_path,
		    json_object_size(llm->journal));
}

struct geak_llm *
geak_llm_open(const struct geak_llm_config *cfg)
{
	static int curl_ready;
	struct geak_llm *llm = geak_xcalloc(1, sizeof *llm);

	llm->cfg = *cfg;
	llm->record_fd = llm->journal_fd = llm->ledger_fd = -1;
	pthread_mutex_init(&llm->mu, NULL);
	if (!curl_ready) {
		if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
			geak_warn("could not initialise libcurl");
			free(llm);
			return NULL;
		}
		curl_ready = 1;
	}
	if (resolve_provider(llm, cfg) || resolve_model(llm, cfg) ||
	    resolve_options(llm, cfg) || resolve_endpoint(llm, cfg) ||
	    (!cfg->replay_path && resolve_key(llm, cfg)) || discover_model(llm) ||
	    load_prices(llm, cfg) ||
	    (cfg->replay_path && geak_llm_replay_load(llm, cfg->replay_path)) ||
	    (cfg->record_path && geak_llm_record_open(llm, cfg->record_path)) ||
	    (cfg->journal_path && !cfg->replay_path &&
	     geak_llm_journal_open(llm, cfg->journal_path)) ||
	    (cfg->ledger_path && geak_llm_ledger_open(llm, cfg->ledger_path))) {
		geak_llm_close(llm);
		return NULL;
	}
	llm->tty = isatty(STDERR_FILENO);
	llm->progress = cfg->verbose && !llm->tty;
	if (cfg->verbose)
		describe(llm);
	return llm;
}

void
geak_llm_close(struct geak_llm *llm)
{
	if (!llm)
		return;
	if (llm->api_key) {
		memset(llm->api_key, 0, strlen(llm->api_key));
		free(llm->api_key);
	}
	if (llm->record_fd >= 0 && close(llm->record_fd) < 0)
		geak_warn("--record %s:", llm->cfg.record_path);
	if (llm->journal_fd >= 0 && close(llm->journal_fd) < 0)
		geak_warn("--journal %s:", llm->cfg.journal_path);
	if (llm->ledger_fd >= 0 && close(llm->ledger_fd) < 0)
		geak_warn("--ledger %s:", llm->cfg.ledger_path);
	json_decref(llm->journal);
	json_decref(llm->journal_used);
	pthread_mutex_destroy(&llm->mu);
	free(llm->model);
	free(llm->base_url);
	free(llm->endpoint);
	free(llm->key_source);
	free(llm->api_version);
	free(llm->reasoning_effort);
	json_decref(llm->replay);
	free(llm);
}

enum geak_llm_provider
geak_llm_provider(const struct geak_llm *llm)
{
	return llm->provider;
}

const char *
geak_llm_model(const struct geak_llm *llm)
{
	return llm->model;
}

int
geak_llm_jobs(const struct geak_llm *llm)
{
	return llm->cfg.jobs > 0 ? llm->cfg.jobs : 1;
}

const char *
geak_llm_endpoint(const struct geak_llm *llm)
{
	return llm->endpoint;
}

void
geak_llm_totals(struct geak_llm *llm, struct geak_llm_totals *t)
{
	pthread_mutex_lock(&llm->mu);
	*t = llm->totals;
	pthread_mutex_unlock(&llm->mu);
	t->cost_known = llm->price.known;
}

json_t *
geak_llm_settings(const struct geak_llm *llm)
{
	json_t *o = json_pack("{s:s, s:s, s:s, s:s, s:b}", "provider", geak_llm_provider_name(llm),
	    "model", llm->model, "model_from", llm->model_why,
	    "base_url", llm->cfg.replay_path ? "" : llm->base_url, "priced", llm->price.known);

	if (!o)
		geak_die(GEAK_EXIT_FATAL, "out of memory");
	return o;
}

int
geak_llm_failure_is_the_runs(const struct geak_llm_reply *reply)
{
	static const char *const records[] = { "too_large", NULL };
	const char *kind = reply->error_kind ? reply->error_kind : "provider";

	if (reply->ok)
		return 0;
	/* The provider refused this request for what it holds (too long, or
	 * not acceptable), not for who sent it or where. */
	if (!strcmp(kind, "http"))
		return reply->http_status != 400 && reply->http_status != 413 &&
		    reply->http_status != 422;
	for (const char *const *k = records; *k; k++)
		if (!strcmp(kind, *k))
			return 0;
	return 1;
}

static json_t *
usage_total(json_t *rec)
{
	json_t *total = json_object_get(rec, "usage_total");

	if (!json_is_object(total)) {
		total = json_object();
		if (!total || json_object_set_new(rec, "usage_total", total) < 0)
			geak_die(GEAK_EXIT_FATAL, "out of memory");
	}
	return total;
}

static void
add_total(json_t *rec, const char *field, long n)
{
	json_t *total = usage_total(rec), *old = json_object_get(total, field);
	long have = json_is_integer(old) ? (long)json_integer_value(old) : 0;

	if (json_object_set_new(total, field, json_integer(have + n)) < 0)
		geak_die(GEAK_EXIT_FATAL, "out of memory");
}

/* What the call cost this run: nothing when it was replayed, null when
 * the model has no price. */
static json_t *
call_cost(const struct geak_llm *llm, const struct geak_llm_reply *reply)
{
	if (reply->replayed)
		return json_real(0);
	return llm->price.known ? json_real(geak_llm_cost(&llm->price, &reply->usage)) :
	    json_null();
}

static void
add_usage_total(json_t *rec, const struct geak_llm *llm, const struct geak_llm_reply *reply)
{
	json_t *total, *cost = call_cost(llm, reply);

	add_total(rec, "calls", 1);
	add_total(rec, "input_tokens", reply->usage.input_tokens);
	add_total(rec, "output_tokens", reply->usage.output_tokens);
	total = usage_total(rec);
	if (json_is_number(cost)) {
		json_t *old = json_object_get(total, "cost");
		double have = json_is_number(old) ? json_number_value(old) : 0;
		if (json_object_set_new(total, "cost", json_real(have + json_number_value(cost))) < 0)
			geak_die(GEAK_EXIT_FATAL, "out of memory");
	}
	json_decref(cost);
}

void
geak_llm_account(json_t *rec, const struct geak_llm *llm, const struct geak_llm_reply *reply)
{
	json_t *info = json_pack("{s:s, s:s, s:o, s:{s:I, s:I, s:I, s:I, s:o}, s:I, s:i, s:b}",
	    "provider", geak_llm_provider_name(llm),
	    "model", llm->model,
	    "request_id", reply->request_id ? json_string(reply->request_id) : json_null(),
	    "usage",
	    "input_tokens", (json_int_t)reply->usage.input_tokens,
	    "output_tokens", (json_int_t)reply->usage.output_tokens,
	    "cached_input_tokens", (json_int_t)reply->usage.cached_input_tokens,
	    "reasoning_tokens", (json_int_t)reply->usage.reasoning_tokens,
	    "cost", call_cost(llm, reply),
	    "latency_ms", (json_int_t)(reply->latency_ms + 0.5),
	    "attempts", reply->attempts,
	    "replayed", reply->replayed);

	if (!info || json_object_set_new(rec, "llm", info) < 0)
		geak_die(GEAK_EXIT_FATAL, "out of memory");
	add_usage_total(rec, llm, reply);
}

void
geak_llm_set_error(json_t *rec, const struct geak_llm *llm, const struct geak_llm_reply *reply)
{
	/* A request that was sent cost a call even when it failed. */
	if (reply->attempts > 0)
		add_usage_total(rec, llm, reply);
	geak_set_error(rec, "llm", reply->error_kind ? reply->error_kind : "provider", "%s",
	    reply->error ? reply->error : "request failed");
}
