/*
 * The job registry: the few things that run on the agent's worker threads (the request
 * worker "agent", the chat frontend "chat", the script runners), what each declares it
 * needs (a worker stack, pool blocks), their state, and the one admission check that says
 * whether a job could start now. docs/jobs.md describes the rules.
 *
 * A job calls agent_job_begin() when its invocation starts (from its own worker thread,
 * before it takes its memory) and agent_job_end() when it is over; jobs_list reads a
 * snapshot. The registry never starts or stops anything itself.
 */
#ifndef AGENT_JOBS_H
#define AGENT_JOBS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent_mem.h"
#include "agent_port.h"

#define AGENT_JOBS_MAX	      6  /* built-in jobs plus registered script runners */
#define AGENT_JOB_NAME_MAX    15
#define AGENT_JOB_OWNER_MAX   15
#define AGENT_JOB_CLAIMS_MAX  3
#define AGENT_JOB_DETAIL_MAX  15 /* the pool or job a reason refers to */

/* "Every block of the pool": the claim of a job that takes a whole pool per invocation. */
#define AGENT_JOB_CLAIM_ALL 0u

struct agent_job_claim {
	const char *pool; /* agent_pool_stats.name */
	uint32_t blocks;  /* AGENT_JOB_CLAIM_ALL or a count */
};

struct agent_job_def {
	const char *name;
	/* Jobs with the same group never run at once (one provider conversation, one Python
	 * interpreter); NULL: no group. */
	const char *group;
	/* Worker stack the job runs on, taken from one of CONFIG_AGENT_THREAD_SLOTS slots;
	 * 0 when it runs on its caller's thread. */
	size_t stack_bytes;
	enum agent_mem_class stack_placement;
	const struct agent_job_claim *claims;
	uint8_t claim_count;
};

enum agent_job_state {
	AGENT_JOB_IDLE,
	AGENT_JOB_RUNNING,
};

enum agent_job_disposition {
	AGENT_JOB_READY,	      /* could start now */
	AGENT_JOB_RUNNING_NOW,	      /* an invocation is running */
	AGENT_JOB_WAITING_FOR_MEMORY, /* a pool it claims has too few free blocks */
	AGENT_JOB_BLOCKED,	      /* no thread slot, stack too large, or its group is busy */
};

/* Why: a fixed token for programs (docs/jobs.md lists them) and what it refers to. */
struct agent_job_admission {
	enum agent_job_disposition disposition;
	const char *reason; /* "admissible", "running", "pool_short", ... */
	char detail[AGENT_JOB_DETAIL_MAX + 1]; /* the pool or the job in the way; "" */
};

struct agent_job_claim_state {
	const char *pool;
	uint32_t blocks;
	size_t bytes;
};

struct agent_job_record {
	char name[AGENT_JOB_NAME_MAX + 1];
	enum agent_job_state state;
	uint32_t generation; /* invocations begun so far */
	struct agent_job_admission admission;
	int last_error; /* of the last invocation that ended; 0 */
	size_t stack_bytes;
	enum agent_mem_class stack_placement;
	char owner[AGENT_JOB_OWNER_MAX + 1]; /* who started the running invocation; "" */
	int64_t started_ms;		     /* uptime at begin; 0 when idle */
	/* What the running invocation holds (its declared claims resolved against the pools);
	 * none when idle. */
	struct agent_job_claim_state claims[AGENT_JOB_CLAIMS_MAX];
	uint8_t claim_count;
};

struct agent_jobs_snapshot {
	int64_t taken_ms;
	struct agent_mem_figures mem[AGENT_MEM_CLASS_COUNT];
	size_t reserve_bytes[AGENT_MEM_CLASS_COUNT]; /* agent_jobs_reserve_bytes() */
	size_t task_overhead_bytes;		     /* agent_thread_overhead_bytes() */
	uint8_t thread_slots;
	uint8_t thread_slots_free;
	size_t slot_stack_bytes;
	uint8_t job_count;
	struct agent_job_record jobs[AGENT_JOBS_MAX];
};

/**
 * Make the registry's lock. agent_init() should call it once before any worker runs; every
 * other call makes the lock on first use otherwise. 0 or the port's error (the registry then
 * works without a lock).
 */
int agent_jobs_init(void);

/** Add a job (a script runner whose runtime is in the firmware). -EEXIST, -ENOSPC, -EINVAL. */
int agent_job_register(const struct agent_job_def *def);

/**
 * An invocation of @p name starts, on behalf of @p owner ("shell", a console name). Call it
 * from the job's own thread before it allocates: the check then counts that thread's slot as
 * the job's own. 0; -ENOENT (no such job), -EALREADY (running), -EBUSY (blocked),
 * -ENOMEM (waiting for memory). @p why (may be NULL) says why.
 */
int agent_job_begin(const char *name, const char *owner, struct agent_job_admission *why);

/** The invocation of @p name is over; @p err is its result (0 or a negative errno). */
void agent_job_end(const char *name, int err);

/** What agent_job_begin() would decide now, without starting anything. -ENOENT. */
int agent_job_check(const char *name, struct agent_job_admission *out);

/**
 * The background reserve of @p mem_class: the heap memory the admission check leaves free
 * for everything that is not a job (CONFIG_AGENT_JOBS_RESERVE_INTERNAL_BYTES or
 * CONFIG_AGENT_JOBS_RESERVE_PSRAM_BYTES where the class has a run-time heap, 0 where it has
 * none). docs/jobs.md.
 */
size_t agent_jobs_reserve_bytes(enum agent_mem_class mem_class);

/** A consistent point-in-time copy of the registry and the pools. */
void agent_jobs_snapshot(struct agent_jobs_snapshot *out);

const char *agent_job_state_name(enum agent_job_state state);
const char *agent_job_disposition_name(enum agent_job_disposition disposition);
const char *agent_jobs_mem_class_name(enum agent_mem_class mem_class);

/** Back to the built-in jobs, idle, generation 0 (tests). */
void agent_jobs_reset(void);

#endif /* AGENT_JOBS_H */
