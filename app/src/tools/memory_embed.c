/*
 * The embedding pass (memory_embed.h): {"model", "input", "encoding_format": "float",
 * "dimensions"} POSTed with http_post() (the provider's TLS and network path) and the answer
 * streamed through memory_embed_parse. Every failure becomes one line for the model.
 */
#if defined(CONFIG_AGENT_TOOLS_MEMORY)

#include <errno.h>
#include <string.h>

#include "http.h"
#include "json_writer.h"
#include "memory_embed.h"
#include "memory_store.h"

/* The request body: the input escaped (\u00XX at worst) and the model. */
#define BODY_MAX (MEMORY_NOTE_MAX * 6 + CONFIG_AGENT_MODEL_MAX_LEN * 6 + 128)

struct exchange {
	struct memory_embed_parse parse;
	int status;
};

/* One embedding pass at a time: the tools run one at a time. PSRAM where there is some. */
static char body[BODY_MAX] AGENT_PSRAM_ATTR;
static struct exchange ex AGENT_PSRAM_ATTR;

const char *memory_embed_unavailable(const struct agent_config *cfg)
{
	if (cfg == NULL || cfg->embeddings[0] == '\0') {
		return "no embeddings endpoint is configured (agent config embeddings URL)";
	}
	if (cfg->embeddings_model[0] == '\0') {
		return "no embeddings model is configured (agent config embeddings-model NAME)";
	}
	return NULL;
}

static int on_status(void *user_data, int status)
{
	struct exchange *e = user_data;

	e->status = status;
	return 0;
}

static int on_body(void *user_data, const char *data, size_t len)
{
	struct exchange *e = user_data;

	/* A malformed document is reported at the end (finish); read the rest regardless. */
	(void)memory_embed_parse_feed(&e->parse, data, len);
	return 0;
}

/*
 * The loop reads -ENOSPC and -EBADMSG from an executor as its own verdicts on the result
 * (tool_exec.c): a failure of the pass is reported with another errno.
 */
static int pass_errno(int err)
{
	return err == -ENOSPC || err == -EBADMSG ? -EIO : err;
}

static int network_fail(struct tool_ctx *ctx, int err, const struct http_url *url)
{
	static const char what[] = "the embeddings endpoint";

	err = pass_errno(err);

	switch (err) {
	case -ETIMEDOUT:
		return tool_fail(ctx, err, "%s sent no data for %d s", what,
				 CONFIG_AGENT_IO_TIMEOUT_S);
	case -ETIME:
		return tool_fail(ctx, err, "%s took longer than %d s", what,
				 CONFIG_AGENT_REQUEST_DEADLINE_S);
	case -ECANCELED:
		return tool_fail(ctx, err, "the embedding pass was cancelled");
	case -EHOSTUNREACH:
		return tool_fail(ctx, err, "%s is unreachable: cannot resolve %s", what, url->host);
	case -ECONNREFUSED:
		return tool_fail(ctx, err, "%s is unreachable: connection refused by %s:%u", what,
				 url->host, (unsigned int)url->port);
	case -EACCES:
		return tool_fail(ctx, err, "%s is unreachable: the certificate of %s is not trusted",
				 what, url->host);
	case -ECONNABORTED:
		return tool_fail(ctx, err, "%s is unreachable: TLS handshake with %s failed", what,
				 url->host);
	case -ECONNRESET:
		return tool_fail(ctx, err, "%s closed the connection before the answer ended",
				 what);
	case -EPROTONOSUPPORT:
		return tool_fail(ctx, err, "this firmware has no TLS: use an http:// embeddings "
					   "URL (docs/tls.md)");
	case -EPROTO:
	case -EMSGSIZE:
		return tool_fail(ctx, err, "%s sent a malformed HTTP response", what);
	default:
		return tool_fail(ctx, err, "%s is unreachable: network error %d", what, err);
	}
}

static int build_body(const struct agent_config *cfg, const char *text, size_t len,
		      size_t *out_len)
{
	struct json_writer w;
	int n;

	jw_init(&w, body, sizeof(body));
	jw_object_begin(&w);
	jw_key(&w, "model");
	jw_string(&w, cfg->embeddings_model);
	jw_key(&w, "input");
	jw_string_n(&w, text, len);
	jw_key(&w, "encoding_format");
	jw_string(&w, "float");
	jw_key(&w, "dimensions");
	jw_int(&w, MEMORY_DIM);
	jw_object_end(&w);
	n = jw_finish(&w);
	if (n < 0) {
		return n;
	}
	*out_len = (size_t)n;
	return 0;
}

int memory_embed(struct tool_ctx *ctx, const char *text, size_t len, float *out)
{
	static const struct http_callbacks cb = {
		.on_status = on_status,
		.on_body = on_body,
	};
	const struct agent_config *cfg = ctx->config;
	const char *unavailable = memory_embed_unavailable(cfg);
	struct http_url url;
	struct http_request req = {
		.url = &url,
		.bearer = ctx->key,
		.content_type = "application/json",
		.accept = "application/json",
		.io_timeout_ms = HTTP_IO_TIMEOUT_MS_DEFAULT,
		.deadline_ms = HTTP_DEADLINE_MS_DEFAULT,
		.cancel = ctx->cancel,
	};
	int err;

	if (unavailable != NULL) {
		return tool_fail(ctx, -ENODEV, "%s", unavailable);
	}
	if (http_url_parse(cfg->embeddings, &url) != 0) {
		return tool_fail(ctx, -EINVAL, "the embeddings URL cannot be used");
	}
	err = build_body(cfg, text, len, &req.body_len);
	if (err != 0) {
		return tool_fail(ctx, -E2BIG, "the embeddings request does not fit its buffer");
	}
	req.body = body;
	memset(&ex, 0, sizeof(ex));
	memory_embed_parse_init(&ex.parse, out, MEMORY_DIM);
	err = http_post(&req, &cb, &ex);
	if (err != 0) {
		return network_fail(ctx, err, &url);
	}
	err = memory_embed_parse_finish(&ex.parse);
	if (ex.status < 200 || ex.status > 299) {
		if (ex.parse.message_len > 0) {
			return tool_fail(ctx, -EIO, "the embeddings endpoint answered HTTP %d: %s",
					 ex.status, ex.parse.message);
		}
		return tool_fail(ctx, -EIO, "the embeddings endpoint answered HTTP %d", ex.status);
	}
	if (err != 0) {
		return tool_fail(ctx, -EPROTO, "%s", ex.parse.why);
	}
	return 0;
}

#endif /* CONFIG_AGENT_TOOLS_MEMORY */
