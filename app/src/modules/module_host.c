/*
 * The feeder queue of imported host tools (module_host.h, docs/modules.md "Host tools"): one
 * call slot, since one request runs at a time. module_host_run() publishes the call and waits;
 * the management group's feed (13) hands it to the feeder once, its result (14) writes the
 * answer into the waiting tool's result under the queue's lock and wakes it. A call that ended
 * (answered, timed out, cancelled) leaves the slot empty, so a late answer finds nothing and is
 * dropped.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "agent_port.h"
#include "json_writer.h"
#include "module_host.h"
#include "module_manifest.h"

#define POLL_MS 100u	   /* how often a waiting call looks at the cancel flag */
#define CLOSE_RESERVE 24u  /* `","truncated":false}` after the output */
#define ESCAPE_MAX 6u	   /* the most JSON bytes one output byte becomes (\u001f) */
#define SHOWN_OUTPUT 96u   /* output bytes quoted in a non-zero exit's error */

static struct agent_mutex *lock;
static struct agent_sem *posted;   /* a call waits to be fetched */
static struct agent_sem *answered; /* the waiting call has its answer */
static uint32_t timeout_ms = CONFIG_AGENT_HOST_TOOL_TIMEOUT_S * 1000u;

static struct {
	bool pending; /* a call waits in module_host_run() */
	bool fetched; /* a feed answer carried it */
	bool done;    /* the answer is in (result is set) */
	uint32_t id;
	int64_t deadline_ms;
	const struct module_host_call *call;
	struct tool_ctx *ctx;
	struct json_writer *out;
	int result;
} slot;
static uint32_t last_id;
static unsigned int feeding;	 /* feed requests waiting now */
static int64_t last_seen_ms = -1; /* the last feed or result request */

int module_host_init(void)
{
	if (lock == NULL && agent_mutex_init(&lock) != 0) {
		return -ENOMEM;
	}
	if (posted == NULL && agent_sem_init(&posted, 0, 1) != 0) {
		return -ENOMEM;
	}
	if (answered == NULL && agent_sem_init(&answered, 0, 1) != 0) {
		return -ENOMEM;
	}
	return 0;
}

#if defined(CONFIG_AGENT_TOOL_TEST_HOOKS)
void module_host_set_timeout_ms(uint32_t ms)
{
	timeout_ms = ms;
}
#endif

/* Under the lock: whether a feeder asked lately (module_host.h, MODULE_HOST_ATTACHED_MS). */
static bool attached(int64_t now)
{
	return feeding > 0 ||
	       (last_seen_ms >= 0 && now - last_seen_ms <= (int64_t)MODULE_HOST_ATTACHED_MS);
}

static int check_call(struct tool_ctx *ctx, const struct module_host_call *call)
{
	size_t bytes = 0;

	if (call->argc > MODULE_TOOL_ARGS_MAX) {
		return tool_fail(ctx, -E2BIG, "host tool %s: %u arguments, at most %u", call->tool,
				 (unsigned int)call->argc, (unsigned int)MODULE_TOOL_ARGS_MAX);
	}
	for (uint8_t i = 0; i < call->argc; i++) {
		bytes += strlen(call->argv[i]);
	}
	if (bytes > MODULE_HOST_ARGS_BYTES) {
		return tool_fail(ctx, -E2BIG,
				 "host tool %s: the arguments take %lu bytes, at most %u", call->tool,
				 (unsigned long)bytes, (unsigned int)MODULE_HOST_ARGS_BYTES);
	}
	return 0;
}

int module_host_run(struct tool_ctx *ctx, const struct module_host_call *call,
		    struct json_writer *out)
{
	int64_t start;
	int err = check_call(ctx, call);

	if (err != 0) {
		return err;
	}
	if (module_host_init() != 0) {
		return tool_fail(ctx, -ENOMEM, "host tool %s: no memory for the feeder queue",
				 call->tool);
	}
	agent_mutex_lock(lock);
	start = agent_uptime_ms();
	if (slot.pending) {
		agent_mutex_unlock(lock);
		return tool_fail(ctx, -EBUSY, "host tool %s: another host tool call is waiting",
				 call->tool);
	}
	if (!attached(start)) {
		agent_mutex_unlock(lock);
		return tool_fail(ctx, -ENOTCONN,
				 "host tool %s: no feeder attached (run `agent-host feed`)",
				 call->tool);
	}
	while (agent_sem_take(answered, 0) == 0) {
		/* the signal of an earlier call that ended first */
	}
	memset(&slot, 0, sizeof(slot));
	slot.pending = true;
	slot.id = ++last_id;
	slot.deadline_ms = start + timeout_ms;
	slot.call = call;
	slot.ctx = ctx;
	slot.out = out;
	agent_mutex_unlock(lock);
	agent_sem_give(posted);

	for (;;) {
		int64_t now;

		(void)agent_sem_take(answered, POLL_MS);
		agent_mutex_lock(lock);
		now = agent_uptime_ms();
		if (slot.done) {
			err = slot.result;
		} else if (ctx->cancel != NULL && agent_cancel_is_raised(ctx->cancel)) {
			err = tool_fail(ctx, -ECANCELED, "host tool %s: cancelled", call->tool);
		} else if (now >= slot.deadline_ms) {
			err = tool_fail(ctx, -ETIMEDOUT,
					"host tool %s: no answer from the feeder within %u ms",
					call->tool, (unsigned int)timeout_ms);
		} else if (!slot.fetched && !attached(now)) {
			err = tool_fail(ctx, -ENOTCONN,
					"host tool %s: the feeder went away before it took the call",
					call->tool);
		} else {
			agent_mutex_unlock(lock);
			continue;
		}
		memset(&slot, 0, sizeof(slot));
		agent_mutex_unlock(lock);
		return err;
	}
}

int module_host_feed(uint32_t wait_ms, uint32_t *id, const struct module_host_call **call,
		     uint32_t *left_ms)
{
	bool waited = false;

	if (module_host_init() != 0) {
		return -ENOMEM;
	}
	(void)agent_sem_take(posted, 0); /* a stale signal: the slot below is what counts */
	for (;;) {
		int64_t now;

		agent_mutex_lock(lock);
		now = agent_uptime_ms();
		last_seen_ms = now;
		if (slot.pending && !slot.fetched && !slot.done) {
			slot.fetched = true;
			*id = slot.id;
			*call = slot.call;
			*left_ms = slot.deadline_ms > now ? (uint32_t)(slot.deadline_ms - now) : 0u;
			return 0; /* locked until module_host_feed_done() */
		}
		if (waited || wait_ms == 0u) {
			agent_mutex_unlock(lock);
			return -EAGAIN;
		}
		feeding++;
		agent_mutex_unlock(lock);
		(void)agent_sem_take(posted, wait_ms);
		agent_mutex_lock(lock);
		feeding--;
		agent_mutex_unlock(lock);
		waited = true;
	}
}

void module_host_feed_done(bool sent)
{
	if (!sent && slot.pending && !slot.done) {
		slot.result = tool_fail(slot.ctx, -EMSGSIZE,
					"host tool %s: the call does not fit a feed answer",
					slot.call->tool);
		slot.done = true;
		agent_sem_give(answered);
	}
	agent_mutex_unlock(lock);
}

/* The output as a JSON string, as much as the result has room for; false when it was cut. */
static bool put_output(struct json_writer *out, const uint8_t *output, size_t len)
{
	size_t done = 0;

	jw_key(out, "output");
	jw_string_begin(out);
	while (done < len) {
		size_t room = tool_result_room(out);
		size_t n = room > CLOSE_RESERVE ? (room - CLOSE_RESERVE) / ESCAPE_MAX : 0u;

		if (n == 0u) {
			break;
		}
		if (n > len - done) {
			n = len - done;
		}
		jw_string_part(out, (const char *)output + done, n);
		done += n;
	}
	jw_string_end(out);
	return done == len;
}

/* Under the lock, for the waiting call: its result or its error. */
static int take_answer(int32_t exit_status, const uint8_t *output, size_t len, bool truncated)
{
	const struct module_host_call *call = slot.call;
	char shown[SHOWN_OUTPUT + 1];
	size_t n = len < SHOWN_OUTPUT ? len : SHOWN_OUTPUT;

	if (exit_status != 0) {
		/* The first line of what it wrote, printable ASCII only, for the model. */
		for (size_t i = 0; i < n; i++) {
			uint8_t c = output[i];

			if (c == '\n') {
				n = i;
				break;
			}
			shown[i] = c >= 0x20u && c < 0x7fu ? (char)c : '?';
		}
		shown[n] = '\0';
		return tool_fail(slot.ctx, -EIO, "host tool %s: exit status %ld%s%s", call->tool,
				 (long)exit_status, n > 0u ? ": " : "", shown);
	}
	if (len > call->output_max) {
		len = call->output_max;
		truncated = true;
	}
	jw_object_begin(slot.out);
	jw_key(slot.out, "exit");
	jw_int(slot.out, 0);
	truncated = !put_output(slot.out, output, len) || truncated;
	jw_key(slot.out, "truncated");
	jw_bool(slot.out, truncated);
	jw_object_end(slot.out);
	return 0;
}

int module_host_answer(uint32_t id, int32_t exit_status, const uint8_t *output, size_t len,
		       bool truncated, char *why, size_t why_len)
{
	if (module_host_init() != 0) {
		return -ENOMEM;
	}
	agent_mutex_lock(lock);
	last_seen_ms = agent_uptime_ms();
	if (!slot.pending || !slot.fetched || slot.done || slot.id != id) {
		agent_mutex_unlock(lock);
		(void)snprintf(why, why_len,
			       "no host tool call %lu waits for an answer (late or unknown); "
			       "dropped",
			       (unsigned long)id);
		return -ENOENT;
	}
	slot.result = take_answer(exit_status, output, len, truncated);
	slot.done = true;
	agent_mutex_unlock(lock);
	agent_sem_give(answered);
	return 0;
}
