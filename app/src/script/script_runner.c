/*
 * The script runner (script_runner.h): the runtimes built in, their bounded heaps, the
 * single-owner guard (each runtime is a job of the registry, docs/jobs.md), output capture,
 * deadline and cancellation, and the structured status. docs/scripting.md.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "agent_jobs.h"
#include "agent_port.h"
#include "json_writer.h"
#include "script_runner.h"
#include "script_runtime.h"
#include "script_internal.h"
#include "tool_capability.h"
#include "utf8.h"

/* How long one slice of script_exec_sleep() is: the stop check's latency while sleeping. */
#define SCRIPT_SLEEP_SLICE_MS 20u

struct runtime_slot {
	const struct script_runtime *rt;
	struct agent_region *heap;
	uint8_t *mem;
	size_t mem_bytes;
	struct agent_job_def job;
	bool ready;
};

#ifdef CONFIG_AGENT_SCRIPT_PYTHON
static uint8_t python_heap[CONFIG_AGENT_SCRIPT_PYTHON_HEAP_SIZE] AGENT_PSRAM_ATTR;
#endif
#ifdef CONFIG_AGENT_SCRIPT_LUA
static uint8_t lua_heap[CONFIG_AGENT_SCRIPT_LUA_HEAP_SIZE] AGENT_PSRAM_ATTR;
#endif

static struct runtime_slot slots[SCRIPT_LANG_COUNT];

#ifdef CONFIG_AGENT_SCRIPT_TEST_HOOKS
static uint32_t deadline_override_ms;

void script_set_deadline_ms(uint32_t ms)
{
	deadline_override_ms = ms;
}
#endif

uint32_t script_deadline_ms(void)
{
#ifdef CONFIG_AGENT_SCRIPT_TEST_HOOKS
	if (deadline_override_ms != 0u) {
		return deadline_override_ms;
	}
#endif
	return (uint32_t)CONFIG_AGENT_MANUAL_SCRIPT_DEADLINE_S * 1000u;
}

static const char *const outcome_names[SCRIPT_OUTCOME_COUNT] = {
	[SCRIPT_COMPLETED] = "completed",
	[SCRIPT_EXCEPTION] = "exception",
	[SCRIPT_CANCELLED] = "cancelled",
	[SCRIPT_DEADLINE] = "deadline",
	[SCRIPT_OUT_OF_MEMORY] = "out_of_memory",
	[SCRIPT_BUSY] = "busy",
	[SCRIPT_UNAVAILABLE] = "unavailable",
	[SCRIPT_LOAD_FAILED] = "load_failed",
};

static const char *const lang_names[SCRIPT_LANG_COUNT] = {
	[SCRIPT_LANG_PYTHON] = "python",
	[SCRIPT_LANG_LUA] = "lua",
};

const char *script_outcome_name(enum script_outcome outcome)
{
	return (unsigned int)outcome < SCRIPT_OUTCOME_COUNT ? outcome_names[outcome] : "unknown";
}

const char *script_lang_name(enum script_lang lang)
{
	return (unsigned int)lang < SCRIPT_LANG_COUNT ? lang_names[lang] : "unknown";
}

int script_lang_parse(const char *name, enum script_lang *out)
{
	for (size_t i = 0; name != NULL && i < SCRIPT_LANG_COUNT; i++) {
		if (strcmp(name, lang_names[i]) == 0) {
			*out = (enum script_lang)i;
			return 0;
		}
	}
	return -EINVAL;
}

#if defined(CONFIG_AGENT_SCRIPT_PYTHON) || defined(CONFIG_AGENT_SCRIPT_LUA)
static int slot_init(enum script_lang lang, const struct script_runtime *rt, uint8_t *mem,
		     size_t bytes)
{
	struct runtime_slot *slot = &slots[lang];
	int err;

	if (slot->ready) {
		return 0;
	}
	slot->rt = rt;
	slot->mem = mem;
	slot->mem_bytes = bytes;
	err = agent_region_init(&slot->heap, rt->job, mem, bytes);
	if (err != 0) {
		return err;
	}
	/* The run happens on its caller's thread (no stack of its own) and its heap is static
	 * (no pool claims): the job is the single-owner guard and what jobs_list shows. */
	slot->job = (struct agent_job_def){
		.name = rt->job,
		.group = rt->job,
		.stack_bytes = 0,
		.stack_placement = AGENT_MEM_INTERNAL,
	};
	err = agent_job_register(&slot->job);
	if (err != 0 && err != -EEXIST) {
		(void)agent_region_deinit(slot->heap);
		return err;
	}
	err = tool_script_runtime_register(rt->name);
	if (err != 0 && err != -EEXIST) {
		(void)agent_region_deinit(slot->heap);
		return err;
	}
	slot->ready = true;
	return 0;
}
#endif

int script_runner_init(void)
{
	int err = 0;

#ifdef CONFIG_AGENT_SCRIPT_PYTHON
	err = slot_init(SCRIPT_LANG_PYTHON, script_runtime_python(), python_heap,
			sizeof(python_heap));
#endif
#ifdef CONFIG_AGENT_SCRIPT_LUA
	{
		int lua_err = slot_init(SCRIPT_LANG_LUA, script_runtime_lua(), lua_heap,
					sizeof(lua_heap));

		err = err != 0 ? err : lua_err;
	}
#endif
	{
		int tools_err = script_tools_register();

		err = err != 0 ? err : tools_err;
	}
	return err;
}

bool script_lang_available(enum script_lang lang)
{
	return (unsigned int)lang < SCRIPT_LANG_COUNT && slots[lang].ready;
}

int script_heap_stats(enum script_lang lang, struct agent_region_stats *out)
{
	if (!script_lang_available(lang)) {
		return -ENOTSUP;
	}
	return agent_region_stats(slots[lang].heap, out);
}

/* ---- The run ------------------------------------------------------------------------------- */

static void set_message(struct script_status *st, const char *text)
{
	size_t len = text != NULL ? strlen(text) : 0u;

	len = utf8_prefix(text != NULL ? text : "", len, SCRIPT_MESSAGE_MAX);
	memcpy(st->message, text != NULL ? text : "", len);
	st->message[len] = '\0';
}

static int refuse(struct script_status *st, enum script_outcome outcome, int err,
		  const char *message)
{
	st->outcome = outcome;
	set_message(st, message);
	return err;
}

struct agent_region *script_exec_heap(struct script_exec *ex)
{
	return ex->heap;
}

const char *script_exec_source(struct script_exec *ex, size_t *len)
{
	*len = ex->source_len;
	return ex->source;
}

void script_exec_release_source(struct script_exec *ex)
{
	if (ex->file_buf != NULL) {
		agent_region_free(ex->heap, ex->file_buf);
		ex->file_buf = NULL;
	}
	ex->source = NULL;
	ex->source_len = 0;
}

const char *script_exec_chunk_name(struct script_exec *ex)
{
	return ex->argv[0];
}

size_t script_exec_c_stack_max(struct script_exec *ex)
{
	(void)ex;
	size_t size = agent_thread_stack_size();

	return size > 0u ? size / 2u : SCRIPT_C_STACK_MAX;
}

uint8_t script_exec_argc(struct script_exec *ex)
{
	return ex->argc;
}

const char *script_exec_arg(struct script_exec *ex, uint8_t index)
{
	return index < ex->argc ? ex->argv[index] : NULL;
}

void script_exec_write(struct script_exec *ex, const char *data, size_t len)
{
	const struct script_request *req = ex->req;
	struct script_status *st = ex->st;
	size_t room = req->out_cap > st->out_len + 1u ? req->out_cap - 1u - st->out_len : 0u;
	size_t take = len < room ? len : room;

	if (take > 0u) {
		memcpy(req->out + st->out_len, data, take);
		st->out_len += take;
		req->out[st->out_len] = '\0';
	}
	st->out_total += len;
	if (take < len) {
		st->truncated = true;
	}
}

enum script_outcome script_exec_check(struct script_exec *ex)
{
	if (ex->stop != SCRIPT_COMPLETED) {
		return ex->stop;
	}
	agent_thread_relax();
	if (ex->req->cancel != NULL && agent_cancel_is_raised(ex->req->cancel)) {
		ex->stop = SCRIPT_CANCELLED;
	} else if (agent_uptime_ms() >= ex->deadline_at_ms) {
		ex->stop = SCRIPT_DEADLINE;
	}
	return ex->stop;
}

enum script_outcome script_exec_sleep(struct script_exec *ex, uint32_t ms)
{
	int64_t until = agent_uptime_ms() + ms;

	while (script_exec_check(ex) == SCRIPT_COMPLETED) {
		int64_t left = until - agent_uptime_ms();

		if (left <= 0) {
			break;
		}
		agent_sleep_ms(left < SCRIPT_SLEEP_SLICE_MS ? (uint32_t)left
							    : SCRIPT_SLEEP_SLICE_MS);
	}
	return script_exec_check(ex);
}

static void copy_cut(char *dst, size_t cap, const char *src)
{
	size_t len = src != NULL ? strlen(src) : 0u;

	len = utf8_prefix(src != NULL ? src : "", len, cap - 1u);
	memcpy(dst, src != NULL ? src : "", len);
	dst[len] = '\0';
}

void script_exec_exception(struct script_exec *ex, const char *type, const char *message,
			   int32_t line)
{
	struct script_status *st = ex->st;

	if (ex->outcome_set) {
		return;
	}
	ex->outcome_set = true;
	st->outcome = SCRIPT_EXCEPTION;
	copy_cut(st->exc_type, sizeof(st->exc_type), type);
	copy_cut(st->message, sizeof(st->message), message);
	st->line = line;
}

void script_exec_out_of_memory(struct script_exec *ex)
{
	if (!ex->outcome_set) {
		ex->outcome_set = true;
		ex->st->outcome = SCRIPT_OUT_OF_MEMORY;
		copy_cut(ex->st->message, sizeof(ex->st->message),
			 "the script's heap could not hold it");
	}
}

void script_exec_stopped(struct script_exec *ex, enum script_outcome why)
{
	if (!ex->outcome_set) {
		ex->outcome_set = true;
		ex->st->outcome = why;
		copy_cut(ex->st->message, sizeof(ex->st->message),
			 why == SCRIPT_DEADLINE ? "stopped at its deadline" : "cancelled");
	}
}

/* Read the file into a block of the runtime's heap: the source while it is compiled. */
static int load_file(struct script_exec *ex)
{
	struct script_status *st = ex->st;
	struct agent_dirent entry;
	struct agent_file *file;
	size_t got = 0;
	int err;

	err = agent_fs_stat(ex->req->path, &entry);
	if (err != 0 || entry.type != AGENT_FS_FILE) {
		return refuse(st, SCRIPT_LOAD_FAILED, err != 0 ? err : -EISDIR,
			      err == -ENOENT ? "no such file" : err != 0 ? "cannot stat the file"
									: "not a file");
	}
	if (entry.size > CONFIG_AGENT_SCRIPT_FILE_MAX_LEN) {
		return refuse(st, SCRIPT_LOAD_FAILED, -EFBIG,
			      "the file is larger than CONFIG_AGENT_SCRIPT_FILE_MAX_LEN");
	}
	ex->file_buf = agent_region_alloc(ex->heap, entry.size + 1u);
	if (ex->file_buf == NULL) {
		return refuse(st, SCRIPT_OUT_OF_MEMORY, -ENOMEM,
			      "the script's heap cannot hold the file");
	}
	err = agent_fs_open(&file, ex->req->path, AGENT_FS_O_READ);
	if (err != 0) {
		return refuse(st, SCRIPT_LOAD_FAILED, err, "cannot open the file");
	}
	while (got < entry.size) {
		int n = agent_fs_read(file, ex->file_buf + got, entry.size - got);

		if (n <= 0) {
			err = n < 0 ? n : -EIO;
			break;
		}
		got += (size_t)n;
	}
	(void)agent_fs_close(file);
	if (err != 0) {
		return refuse(st, SCRIPT_LOAD_FAILED, err, "cannot read the file");
	}
	ex->file_buf[got] = '\0';
	ex->source = ex->file_buf;
	ex->source_len = got;
	return 0;
}

static int check_request(const struct script_request *req, struct script_status *st)
{
	bool has_source = req->source != NULL;
	bool has_path = req->path != NULL;

	if (has_source == has_path || req->out == NULL || req->out_cap == 0u) {
		return refuse(st, SCRIPT_LOAD_FAILED, -EINVAL,
			      "give a source string or a file, and an output buffer");
	}
	if (req->argc > CONFIG_AGENT_SCRIPT_FILE_ARGS_MAX) {
		return refuse(st, SCRIPT_LOAD_FAILED, -E2BIG, "too many arguments");
	}
	return 0;
}

int script_run(const struct script_request *req, struct script_status *status)
{
	struct script_exec ex = {0};
	struct agent_job_admission why;
	struct agent_region_stats heap;
	struct runtime_slot *slot;
	int64_t start;
	int err;

	memset(status, 0, sizeof(*status));
	if (req == NULL) {
		return refuse(status, SCRIPT_LOAD_FAILED, -EINVAL, "no request");
	}
	if (req->out != NULL && req->out_cap > 0u) {
		req->out[0] = '\0';
	}
	err = check_request(req, status);
	if (err != 0) {
		return err;
	}
	if (!script_lang_available(req->lang)) {
		return refuse(status, SCRIPT_UNAVAILABLE, -ENOTSUP,
			      "this runtime is not built into the firmware");
	}
	slot = &slots[req->lang];
	err = agent_job_begin(slot->rt->job, req->owner != NULL ? req->owner : "", &why);
	if (err != 0) {
		char text[SCRIPT_MESSAGE_MAX + 1];

		(void)snprintf(text, sizeof(text), "%s is %s%s%s", slot->rt->job,
			       err == -EALREADY ? "already running" : why.reason,
			       why.detail[0] != '\0' ? ": " : "", why.detail);
		return refuse(status, SCRIPT_BUSY, -EBUSY, text);
	}
	start = agent_uptime_ms();
	ex.req = req;
	ex.st = status;
	ex.heap = slot->heap;
	ex.deadline_at_ms = start + req->deadline_ms;
	ex.argv[0] = req->argv0 != NULL ? req->argv0 : req->path != NULL ? req->path : "<stdin>";
	for (uint8_t i = 0; i < req->argc; i++) {
		ex.argv[1 + i] = req->argv[i] != NULL ? req->argv[i] : "";
	}
	ex.argc = (uint8_t)(1u + req->argc);
	agent_region_reset_peak(slot->heap);
	if (req->path != NULL) {
		err = load_file(&ex);
	} else {
		ex.source = req->source;
		ex.source_len = req->source_len;
	}
	if (err == 0) {
		status->outcome = SCRIPT_COMPLETED;
		slot->rt->run(&ex);
	}
	script_api_release(&ex);
	script_exec_release_source(&ex);
	status->elapsed_ms = (uint32_t)(agent_uptime_ms() - start);
	if (agent_region_stats(slot->heap, &heap) == 0) {
		status->heap_peak_bytes = heap.peak_used_bytes;
		status->heap_left_bytes = heap.used_bytes;
	}
	agent_job_end(slot->rt->job, err);
	return err == 0 || status->outcome == SCRIPT_OUT_OF_MEMORY ? 0 : err;
}

void script_status_json(const struct script_status *status, const char *output,
			struct json_writer *out)
{
	jw_key(out, "outcome");
	jw_string(out, script_outcome_name(status->outcome));
	if (status->outcome == SCRIPT_EXCEPTION) {
		jw_key(out, "type");
		jw_string(out, status->exc_type);
		jw_key(out, "line");
		jw_int(out, status->line);
	}
	if (status->message[0] != '\0' && status->outcome != SCRIPT_COMPLETED) {
		jw_key(out, "message");
		jw_string(out, status->message);
	}
	jw_key(out, "truncated");
	jw_bool(out, status->truncated);
	if (status->truncated) {
		jw_key(out, "output_bytes");
		jw_int(out, (int64_t)status->out_total);
	}
	jw_key(out, "output");
	jw_string_n(out, output != NULL ? output : "", output != NULL ? status->out_len : 0u);
}
