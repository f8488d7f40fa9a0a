/*
 * The job registry and its admission check (agent_jobs.h, docs/jobs.md). One table, one
 * lock; the check reads the real pool statistics (agent_pool_foreach) and counts thread
 * slots against CONFIG_AGENT_THREAD_SLOTS, the slots the firmware port owns.
 */
#include "agent_jobs.h"

#include <errno.h>
#include <string.h>

/*
 * The provider's pools (provider_init() in provider.c): a request takes every block of both
 * for its whole run, whichever frontend sent it.
 */
static const struct agent_job_claim provider_claims[] = {
	{.pool = "stream", .blocks = AGENT_JOB_CLAIM_ALL},
	{.pool = "request", .blocks = AGENT_JOB_CLAIM_ALL},
};

static const struct agent_job_def builtin_jobs[] = {
	{
		.name = "agent",
		.group = "provider",
		.stack_bytes = CONFIG_AGENT_WORKER_STACK_SIZE,
		.stack_placement = AGENT_MEM_INTERNAL,
		.claims = provider_claims,
		.claim_count = sizeof(provider_claims) / sizeof(provider_claims[0]),
	},
	{
		.name = "chat",
		.group = "provider",
		.stack_bytes = CONFIG_AGENT_WORKER_STACK_SIZE,
		.stack_placement = AGENT_MEM_INTERNAL,
		.claims = provider_claims,
		.claim_count = sizeof(provider_claims) / sizeof(provider_claims[0]),
	},
};

#define BUILTIN_COUNT (sizeof(builtin_jobs) / sizeof(builtin_jobs[0]))

_Static_assert(BUILTIN_COUNT <= AGENT_JOBS_MAX, "AGENT_JOBS_MAX below the built-in jobs");

struct job {
	const struct agent_job_def *def;
	enum agent_job_state state;
	uint32_t generation;
	int last_error;
	char owner[AGENT_JOB_OWNER_MAX + 1];
	int64_t started_ms;
};

static struct job jobs[AGENT_JOBS_MAX];
static size_t job_count;
static bool jobs_ready;
static struct agent_mutex *jobs_mutex;

/* ---- table and lock ------------------------------------------------------------------------ */

static void table_init(void)
{
	memset(jobs, 0, sizeof(jobs));
	for (size_t i = 0; i < BUILTIN_COUNT; i++) {
		jobs[i].def = &builtin_jobs[i];
	}
	job_count = BUILTIN_COUNT;
	jobs_ready = true;
}

int agent_jobs_init(void)
{
	int err = 0;

	if (jobs_mutex == NULL) {
		err = agent_mutex_init(&jobs_mutex);
	}
	if (jobs_mutex != NULL) {
		agent_mutex_lock(jobs_mutex);
	}
	if (!jobs_ready) {
		table_init();
	}
	if (jobs_mutex != NULL) {
		agent_mutex_unlock(jobs_mutex);
	}
	return err;
}

static void jobs_lock(void)
{
	if (jobs_mutex == NULL || !jobs_ready) {
		(void)agent_jobs_init();
	}
	if (jobs_mutex != NULL) {
		agent_mutex_lock(jobs_mutex);
	}
}

static void jobs_unlock(void)
{
	if (jobs_mutex != NULL) {
		agent_mutex_unlock(jobs_mutex);
	}
}

static struct job *job_find(const char *name)
{
	if (name == NULL) {
		return NULL;
	}
	for (size_t i = 0; i < job_count; i++) {
		if (strcmp(jobs[i].def->name, name) == 0) {
			return &jobs[i];
		}
	}
	return NULL;
}

static void copy_bounded(char *dst, size_t cap, const char *src)
{
	size_t len = 0;

	while (src != NULL && len + 1u < cap && src[len] != '\0') {
		dst[len] = src[len];
		len++;
	}
	dst[len] = '\0';
}

/* ---- pools --------------------------------------------------------------------------------- */

static const struct agent_pool_stats *pool_find(const struct agent_mem_pool_list *view,
						const char *name)
{
	for (size_t i = 0; i < view->count; i++) {
		if (view->stats[i].name != NULL && strcmp(view->stats[i].name, name) == 0) {
			return &view->stats[i];
		}
	}
	return NULL;
}

static uint32_t claim_blocks(const struct agent_job_claim *claim,
			     const struct agent_pool_stats *stats)
{
	return claim->blocks == AGENT_JOB_CLAIM_ALL ? stats->blocks_total : claim->blocks;
}

/* ---- admission ----------------------------------------------------------------------------- */

size_t agent_jobs_reserve_bytes(enum agent_mem_class mem_class)
{
	size_t heap_free;

	/* Without a heap nothing but the pools uses the class: no one to keep memory for. */
	if (agent_heap_free(mem_class, &heap_free) != 0) {
		return 0;
	}
	return mem_class == AGENT_MEM_PSRAM ? (size_t)CONFIG_AGENT_JOBS_RESERVE_PSRAM_BYTES
					    : (size_t)CONFIG_AGENT_JOBS_RESERVE_INTERNAL_BYTES;
}

static void decide(struct agent_job_admission *out, enum agent_job_disposition disposition,
		   const char *reason, const char *detail)
{
	out->disposition = disposition;
	out->reason = reason;
	copy_bounded(out->detail, sizeof(out->detail), detail);
}

/* Under the lock. @p view holds the pools as they are now. */
static void admission(const struct job *job, const struct agent_mem_pool_list *view,
		      struct agent_job_admission *out)
{
	const struct agent_job_def *def = job->def;
	unsigned int slots_used = 0;

	if (job->state == AGENT_JOB_RUNNING) {
		decide(out, AGENT_JOB_RUNNING_NOW, "running", NULL);
		return;
	}
	for (size_t i = 0; i < job_count; i++) {
		const struct job *other = &jobs[i];

		if (other->state != AGENT_JOB_RUNNING) {
			continue;
		}
		if (other->def->stack_bytes > 0u) {
			slots_used++;
		}
		if (def->group != NULL && other->def->group != NULL &&
		    strcmp(def->group, other->def->group) == 0) {
			decide(out, AGENT_JOB_BLOCKED, "group_busy", other->def->name);
			return;
		}
	}
	if (def->stack_bytes > CONFIG_AGENT_WORKER_STACK_SIZE) {
		decide(out, AGENT_JOB_BLOCKED, "stack_too_large", NULL);
		return;
	}
	/* A job begins on its own thread, which already holds a slot the running jobs do not
	 * account for: either way one slot beyond the running jobs' must exist. */
	if (def->stack_bytes > 0u && slots_used >= CONFIG_AGENT_THREAD_SLOTS) {
		decide(out, AGENT_JOB_BLOCKED, "no_thread_slot", NULL);
		return;
	}
	for (uint8_t i = 0; i < def->claim_count; i++) {
		const struct agent_job_claim *claim = &def->claims[i];
		const struct agent_pool_stats *stats = pool_find(view, claim->pool);
		uint32_t blocks;

		if (stats == NULL) {
			/* Not made yet: pools are made from static buffers on first use, so a
			 * missing pool is a complete one. */
			continue;
		}
		blocks = claim_blocks(claim, stats);
		if (stats->blocks_free < blocks) {
			decide(out, AGENT_JOB_WAITING_FOR_MEMORY, "pool_short", claim->pool);
			return;
		}
	}
	/*
	 * The heap of each class keeps its background reserve free. A job takes nothing from
	 * it: its claims are pool blocks (checked above, against the pools), its stack and its
	 * thread's record a static slot (checked above, no_thread_slot). So the heap's free bytes
	 * alone are compared with the reserve; the pools' free blocks are not heap and count
	 * for nothing here.
	 */
	for (size_t c = 0; c < AGENT_MEM_CLASS_COUNT; c++) {
		size_t reserve = agent_jobs_reserve_bytes((enum agent_mem_class)c);
		size_t heap_free;

		if (reserve == 0u || agent_heap_free((enum agent_mem_class)c, &heap_free) != 0) {
			continue;
		}
		if (heap_free < reserve) {
			decide(out, AGENT_JOB_WAITING_FOR_MEMORY, "reserve_short",
			       agent_jobs_mem_class_name((enum agent_mem_class)c));
			return;
		}
	}
	decide(out, AGENT_JOB_READY, "admissible", NULL);
}

static int errno_of(enum agent_job_disposition disposition)
{
	switch (disposition) {
	case AGENT_JOB_READY:
		return 0;
	case AGENT_JOB_RUNNING_NOW:
		return -EALREADY;
	case AGENT_JOB_WAITING_FOR_MEMORY:
		return -ENOMEM;
	case AGENT_JOB_BLOCKED:
	default:
		return -EBUSY;
	}
}

/* ---- API ----------------------------------------------------------------------------------- */

int agent_job_register(const struct agent_job_def *def)
{
	int err = 0;

	if (def == NULL || def->name == NULL || def->name[0] == '\0' ||
	    strlen(def->name) > AGENT_JOB_NAME_MAX || def->claim_count > AGENT_JOB_CLAIMS_MAX ||
	    (def->claim_count > 0u && def->claims == NULL) ||
	    (unsigned int)def->stack_placement >= AGENT_MEM_CLASS_COUNT) {
		return -EINVAL;
	}
	jobs_lock();
	if (job_find(def->name) != NULL) {
		err = -EEXIST;
	} else if (job_count == AGENT_JOBS_MAX) {
		err = -ENOSPC;
	} else {
		memset(&jobs[job_count], 0, sizeof(jobs[job_count]));
		jobs[job_count++].def = def;
	}
	jobs_unlock();
	return err;
}

int agent_job_check(const char *name, struct agent_job_admission *out)
{
	struct agent_mem_pool_list view;
	struct job *job;
	int err = 0;

	if (out == NULL) {
		return -EINVAL;
	}
	/* Pools are read before the registry lock: the pool visitor takes the pool lock, and
	 * nothing that holds it ever waits for this one. */
	agent_mem_pools(&view);
	jobs_lock();
	job = job_find(name);
	if (job == NULL) {
		err = -ENOENT;
	} else {
		admission(job, &view, out);
	}
	jobs_unlock();
	return err;
}

int agent_job_begin(const char *name, const char *owner, struct agent_job_admission *why)
{
	struct agent_job_admission local;
	struct agent_job_admission *out = why != NULL ? why : &local;
	struct agent_mem_pool_list view;
	struct job *job;
	int err;

	agent_mem_pools(&view);
	jobs_lock();
	job = job_find(name);
	if (job == NULL) {
		decide(out, AGENT_JOB_BLOCKED, "unknown_job", NULL);
		jobs_unlock();
		return -ENOENT;
	}
	admission(job, &view, out);
	err = errno_of(out->disposition);
	if (err == 0) {
		job->state = AGENT_JOB_RUNNING;
		job->generation++;
		copy_bounded(job->owner, sizeof(job->owner), owner);
		job->started_ms = agent_uptime_ms();
		decide(out, AGENT_JOB_RUNNING_NOW, "running", NULL);
	}
	jobs_unlock();
	return err;
}

void agent_job_end(const char *name, int err)
{
	struct job *job;

	jobs_lock();
	job = job_find(name);
	if (job != NULL && job->state == AGENT_JOB_RUNNING) {
		job->state = AGENT_JOB_IDLE;
		job->last_error = err;
		job->owner[0] = '\0';
		job->started_ms = 0;
	}
	jobs_unlock();
}

static void record_fill(const struct job *job, const struct agent_mem_pool_list *view,
			struct agent_job_record *rec)
{
	const struct agent_job_def *def = job->def;

	memset(rec, 0, sizeof(*rec));
	copy_bounded(rec->name, sizeof(rec->name), def->name);
	rec->state = job->state;
	rec->generation = job->generation;
	admission(job, view, &rec->admission);
	rec->last_error = job->last_error;
	rec->stack_bytes = def->stack_bytes;
	rec->stack_placement = def->stack_placement;
	copy_bounded(rec->owner, sizeof(rec->owner), job->owner);
	rec->started_ms = job->started_ms;
	if (job->state != AGENT_JOB_RUNNING) {
		return;
	}
	for (uint8_t i = 0; i < def->claim_count && i < AGENT_JOB_CLAIMS_MAX; i++) {
		const struct agent_job_claim *claim = &def->claims[i];
		const struct agent_pool_stats *stats = pool_find(view, claim->pool);
		struct agent_job_claim_state *held = &rec->claims[rec->claim_count++];

		held->pool = claim->pool;
		held->blocks = stats != NULL ? claim_blocks(claim, stats) : claim->blocks;
		held->bytes = stats != NULL ? (size_t)held->blocks * stats->block_bytes : 0u;
	}
}

void agent_jobs_snapshot(struct agent_jobs_snapshot *out)
{
	struct agent_mem_pool_list view;
	unsigned int slots_used = 0;

	if (out == NULL) {
		return;
	}
	memset(out, 0, sizeof(*out));
	agent_mem_pools(&view);
	out->taken_ms = agent_uptime_ms();
	agent_mem_figures_from_pools(out->mem, view.stats, view.count);
	for (size_t c = 0; c < AGENT_MEM_CLASS_COUNT; c++) {
		out->reserve_bytes[c] = agent_jobs_reserve_bytes((enum agent_mem_class)c);
	}
	out->task_overhead_bytes = agent_thread_overhead_bytes();
	out->thread_slots = CONFIG_AGENT_THREAD_SLOTS;
	out->slot_stack_bytes = CONFIG_AGENT_WORKER_STACK_SIZE;

	jobs_lock();
	for (size_t i = 0; i < job_count; i++) {
		if (jobs[i].state == AGENT_JOB_RUNNING && jobs[i].def->stack_bytes > 0u) {
			slots_used++;
		}
		record_fill(&jobs[i], &view, &out->jobs[i]);
	}
	out->job_count = (uint8_t)job_count;
	jobs_unlock();
	out->thread_slots_free = slots_used >= CONFIG_AGENT_THREAD_SLOTS
					 ? 0u
					 : (uint8_t)(CONFIG_AGENT_THREAD_SLOTS - slots_used);
}

void agent_jobs_reset(void)
{
	jobs_lock();
	table_init();
	jobs_unlock();
}

const char *agent_job_state_name(enum agent_job_state state)
{
	return state == AGENT_JOB_RUNNING ? "running" : "idle";
}

const char *agent_job_disposition_name(enum agent_job_disposition disposition)
{
	switch (disposition) {
	case AGENT_JOB_READY:
		return "ready";
	case AGENT_JOB_RUNNING_NOW:
		return "running";
	case AGENT_JOB_WAITING_FOR_MEMORY:
		return "waiting_for_memory";
	case AGENT_JOB_BLOCKED:
	default:
		return "blocked";
	}
}

const char *agent_jobs_mem_class_name(enum agent_mem_class mem_class)
{
	return mem_class == AGENT_MEM_PSRAM ? "psram" : "internal";
}
