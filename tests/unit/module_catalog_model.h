/*
 * A reference model of the module catalog (app/src/modules/module_catalog.h), shared by the
 * property test (test_module_catalog_model.c) and the libFuzzer target
 * (tests/fuzz/fuzz_module_catalog.c). Each model_* operation makes the real call, works out
 * on its own what the call should have answered and done, checks the answer, and keeps its
 * own copy of the catalog: the entries, a byte map of the arena saying which entry owns each
 * byte, and an image of the bytes written. model_check() then compares the whole catalog
 * with the model: every field of every entry, no two runs overlapping, every run inside the
 * arena, every written byte as written, find, the installed order and the statistics.
 *
 * The model finds free room its own way, byte by byte in the map (the catalog walks its
 * entries' runs), so a begin must succeed exactly when the map has a gap of the size (the
 * lowest one, at the same offset) and a refusal must give the map's largest gap.
 *
 * The includer defines MODEL_FAIL(fmt, ...), which reports and does not return.
 */
#ifndef MODULE_CATALOG_MODEL_H
#define MODULE_CATALOG_MODEL_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "module_catalog.h"

#define MODEL_SLOTS CONFIG_AGENT_MODULE_SLOTS
#define MODEL_BYTES ((uint32_t)CONFIG_AGENT_CATALOG_BYTES)
#define MODEL_FREE  0xffu /* the byte map's value of a free byte (slots are < 64) */

struct model_entry {
	enum module_state state;
	enum module_kind kind;
	char name[MODULE_NAME_MAX + 1];
	uint8_t digest[MODULE_DIGEST_LEN];
	uint32_t off;
	uint32_t manifest_len;
	uint32_t body_len;
	uint32_t size;
	uint32_t received;
	uint32_t seq;
};

struct model {
	struct model_entry e[MODEL_SLOTS];
	union { /* the entry owning each byte, or MODEL_FREE; read as words to skip free ones */
		uint8_t owner[MODEL_BYTES];
		uint64_t owner_words[(MODEL_BYTES + 7u) / 8u];
	};
	uint8_t image[MODEL_BYTES]; /* the bytes written, where they were written */
	uint32_t free_bytes;
	uint32_t last_seq;
	bool crowd; /* small texts and few frees, so the entries run out before the arena */
	uint64_t ops;
	/* What the operations came to, so a driver can tell its mix reaches every case. */
	uint64_t begun, no_room, no_entry, commits, writes, gaps;
};

/* The name rule restated: 1..31 bytes, [a-z] then [a-z0-9_-]. */
static bool model_name_ok(const char *name)
{
	size_t n = name != NULL ? strlen(name) : 0u;

	if (n == 0u || n > MODULE_NAME_MAX || name[0] < 'a' || name[0] > 'z') {
		return false;
	}
	for (size_t i = 1; i < n; i++) {
		if (strchr("abcdefghijklmnopqrstuvwxyz0123456789_-", name[i]) == NULL) {
			return false;
		}
	}
	return true;
}

static void model_reset(struct model *m)
{
	module_catalog_reset();
	memset(m->e, 0, sizeof(m->e));
	memset(m->owner, MODEL_FREE, sizeof(m->owner));
	memset(m->image, 0, sizeof(m->image));
	m->free_bytes = MODEL_BYTES;
	m->last_seq = 0;
}

/*
 * The lowest run of @p size free bytes in the byte map (true, *off), and the largest run.
 * An owned byte starts its entry's run (checked), which is then stepped over whole; free
 * bytes are read eight at a time.
 */
static bool model_first_fit(const struct model *m, uint32_t size, uint32_t *off,
			    uint32_t *largest)
{
	bool found = false;
	uint32_t i = 0, j;

	_Static_assert(MODEL_FREE == 0xffu, "a word of free bytes is UINT64_MAX");

	*largest = 0;
	while (i < MODEL_BYTES) {
		if (m->owner[i] != MODEL_FREE) {
			const struct model_entry *e = &m->e[m->owner[i]];

			if (e->state == MODULE_FREE || e->off != i) {
				MODEL_FAIL("op %llu: byte %u of the map is not the start of entry %u",
					   (unsigned long long)m->ops, i, m->owner[i]);
			}
			i += e->size;
			continue;
		}
		for (j = i; j < MODEL_BYTES && m->owner[j] == MODEL_FREE;) {
			if (j % 8u == 0u && j + 8u <= MODEL_BYTES && m->owner_words[j / 8u] == UINT64_MAX) {
				j += 8u;
			} else {
				j++;
			}
		}
		if (j - i > *largest) {
			*largest = j - i;
		}
		if (!found && size > 0u && j - i >= size) {
			found = true;
			*off = i;
		}
		i = j;
	}
	return found;
}

static void model_drop(struct model *m, int slot)
{
	struct model_entry *e = &m->e[slot];

	if (e->state == MODULE_FREE) {
		return;
	}
	for (uint32_t i = e->off; i < e->off + e->size; i++) {
		if (m->owner[i] != (uint8_t)slot) {
			MODEL_FAIL("op %llu: byte %u of entry %d owned by %u", (unsigned long long)m->ops,
				   i, slot, m->owner[i]);
		}
		m->owner[i] = MODEL_FREE;
	}
	m->free_bytes += e->size;
	memset(e, 0, sizeof(*e));
}

static int model_find(const struct model *m, const char *name, enum module_state state)
{
	for (int i = 0; i < MODEL_SLOTS; i++) {
		if (m->e[i].state == state && strcmp(m->e[i].name, name) == 0) {
			return i;
		}
	}
	return -1;
}

static void model_begin(struct model *m, const char *name, enum module_kind kind,
			uint32_t manifest_len, uint32_t body_len, const uint8_t *digest)
{
	uint64_t size = (uint64_t)manifest_len + body_len;
	uint32_t need = 0xdeadbeefu, largest = 0xdeadbeefu, want_off = 0, want_largest = 0;
	int rc, want, old;

	m->ops++;
	rc = module_catalog_begin(name, kind, manifest_len, body_len, digest, &need, &largest);
	if (!model_name_ok(name) || (unsigned int)kind >= MODULE_KIND_COUNT || size == 0u ||
	    size > MODEL_BYTES) {
		want = -EINVAL;
	} else {
		old = model_find(m, name, MODULE_INCOMPLETE);
		if (old >= 0) {
			model_drop(m, old);
		}
		want = -ENOSPC;
		for (int i = 0; i < MODEL_SLOTS && want < 0; i++) {
			if (m->e[i].state == MODULE_FREE) {
				want = i;
			}
		}
		if (want >= 0 &&
		    !model_first_fit(m, (uint32_t)size, &want_off, &want_largest)) {
			want = -ENOMEM;
		}
	}
	if (rc != want) {
		MODEL_FAIL("op %llu: begin %s of %llu bytes gave %d, the model %d",
			   (unsigned long long)m->ops, name, (unsigned long long)size, rc, want);
	}
	if (want == -ENOMEM && (need != (uint32_t)size || largest != want_largest)) {
		MODEL_FAIL("op %llu: refused %llu bytes with need %u largest %u, the model %u",
			   (unsigned long long)m->ops, (unsigned long long)size, need, largest,
			   want_largest);
	}
	m->no_room += want == -ENOMEM;
	m->no_entry += want == -ENOSPC;
	if (want < 0) {
		return;
	}
	m->begun++;
	struct model_entry *e = &m->e[want];

	e->state = MODULE_INCOMPLETE;
	e->kind = kind;
	memcpy(e->name, name, strlen(name) + 1u);
	if (digest != NULL) {
		memcpy(e->digest, digest, MODULE_DIGEST_LEN);
	}
	e->off = want_off;
	e->manifest_len = manifest_len;
	e->body_len = body_len;
	e->size = (uint32_t)size;
	for (uint32_t i = e->off; i < e->off + e->size; i++) {
		if (m->owner[i] != MODEL_FREE) {
			MODEL_FAIL("op %llu: the model placed entry %d over entry %u",
				   (unsigned long long)m->ops, want, m->owner[i]);
		}
		m->owner[i] = (uint8_t)want;
	}
	m->free_bytes -= e->size;
}

static void model_write(struct model *m, int slot, uint32_t off, const uint8_t *data, size_t len)
{
	int rc = module_catalog_write(slot, off, data, len);
	bool ok = false;
	struct model_entry *e = NULL;

	m->ops++;
	if (slot >= 0 && slot < MODEL_SLOTS && m->e[slot].state == MODULE_INCOMPLETE) {
		e = &m->e[slot];
		ok = off <= e->size && len <= (size_t)(e->size - off) && off <= e->received;
	}
	if (rc != (ok ? 0 : -EINVAL)) {
		MODEL_FAIL("op %llu: write to %d at %u of %zu bytes gave %d, the model %s",
			   (unsigned long long)m->ops, slot, off, len, rc, ok ? "ok" : "-EINVAL");
	}
	m->gaps += e != NULL && off > e->received;
	if (!ok) {
		return;
	}
	m->writes++;
	memcpy(&m->image[e->off + off], data, len);
	if (off + len > e->received) {
		e->received = off + (uint32_t)len;
	}
}

static void model_commit(struct model *m, int slot)
{
	int rc = module_catalog_commit(slot);
	bool ok = slot >= 0 && slot < MODEL_SLOTS && m->e[slot].state == MODULE_INCOMPLETE &&
		  m->e[slot].received == m->e[slot].size;

	m->ops++;
	if (rc != (ok ? 0 : -EINVAL)) {
		MODEL_FAIL("op %llu: commit of %d gave %d, the model %s", (unsigned long long)m->ops,
			   slot, rc, ok ? "ok" : "-EINVAL");
	}
	if (!ok) {
		return;
	}
	int old = model_find(m, m->e[slot].name, MODULE_INSTALLED);

	if (old >= 0) {
		model_drop(m, old);
	}
	m->e[slot].state = MODULE_INSTALLED;
	m->e[slot].seq = ++m->last_seq;
	m->commits++;
}

static void model_free(struct model *m, int slot)
{
	m->ops++;
	module_catalog_free(slot);
	if (slot >= 0 && slot < MODEL_SLOTS) {
		model_drop(m, slot);
	}
}

static void model_check_entry(const struct model *m, int i)
{
	const struct model_entry *w = &m->e[i];
	const struct module_entry *e = module_catalog_entry(i);
	const char *text = module_catalog_text(i);
	unsigned long long op = (unsigned long long)m->ops;

	if (e == NULL || e->state != w->state) {
		MODEL_FAIL("op %llu: entry %d is %s, the model %s", op, i,
			   e != NULL ? module_state_name(e->state) : "missing",
			   module_state_name(w->state));
	}
	if (w->state == MODULE_FREE) {
		if (text != NULL) {
			MODEL_FAIL("op %llu: free entry %d has text", op, i);
		}
		return;
	}
	if (e->kind != w->kind || strcmp(e->name, w->name) != 0 ||
	    memcmp(e->digest, w->digest, MODULE_DIGEST_LEN) != 0 || e->off != w->off ||
	    e->manifest_len != w->manifest_len || e->body_len != w->body_len ||
	    e->received != w->received || module_entry_size(e) != w->size ||
	    (w->state == MODULE_INSTALLED && e->seq != w->seq)) {
		MODEL_FAIL("op %llu: entry %d (%s) is off %u size %u received %u seq %u, the model "
			   "%s off %u size %u received %u seq %u",
			   op, i, e->name, e->off, module_entry_size(e), e->received, e->seq, w->name,
			   w->off, w->size, w->received, w->seq);
	}
	if ((uint64_t)e->off + module_entry_size(e) > MODEL_BYTES) {
		MODEL_FAIL("op %llu: entry %d runs past the arena", op, i);
	}
	if (text == NULL || memcmp(text, &m->image[w->off], w->received) != 0) {
		MODEL_FAIL("op %llu: entry %d's text is not what was written", op, i);
	}
	if (module_catalog_find(w->name, w->state) != i) {
		MODEL_FAIL("op %llu: find %s gave %d, not %d", op, w->name,
			   module_catalog_find(w->name, w->state), i);
	}
}

static void model_check(const struct model *m)
{
	unsigned long long op = (unsigned long long)m->ops;
	struct module_catalog_stats stats;
	uint32_t entries = 0, off, largest;

	for (int i = 0; i < MODEL_SLOTS; i++) {
		model_check_entry(m, i);
		entries += m->e[i].state != MODULE_FREE;
	}
	/* No two runs overlap (the real entries, pairwise). */
	for (int i = 0; i < MODEL_SLOTS; i++) {
		const struct module_entry *a = module_catalog_entry(i);

		for (int j = i + 1; j < MODEL_SLOTS && a->state != MODULE_FREE; j++) {
			const struct module_entry *b = module_catalog_entry(j);

			if (b->state != MODULE_FREE && a->off < b->off + module_entry_size(b) &&
			    b->off < a->off + module_entry_size(a)) {
				MODEL_FAIL("op %llu: entries %d and %d overlap", op, i, j);
			}
		}
	}
	(void)model_first_fit(m, 0, &off, &largest);
	module_catalog_stats(&stats);
	if (stats.entries != entries || stats.used_bytes != MODEL_BYTES - m->free_bytes ||
	    stats.free_bytes != m->free_bytes || stats.largest_free != largest) {
		MODEL_FAIL("op %llu: stats %u entries %u used %u free %u largest, the model "
			   "%u %u %u %u",
			   op, stats.entries, stats.used_bytes, stats.free_bytes,
			   stats.largest_free, entries, MODEL_BYTES - m->free_bytes,
			   m->free_bytes, largest);
	}
	/* The installed entries in seq order: each next one is the model's next seq. */
	uint32_t seq = 0;
	int found = 0;

	for (int i = module_catalog_next_installed(0); i >= 0;
	     i = module_catalog_next_installed(seq)) {
		if (m->e[i].state != MODULE_INSTALLED || m->e[i].seq <= seq) {
			MODEL_FAIL("op %llu: installed order gave entry %d after seq %u", op, i, seq);
		}
		seq = m->e[i].seq;
		found++;
	}
	for (int i = 0; i < MODEL_SLOTS; i++) {
		found -= m->e[i].state == MODULE_INSTALLED;
	}
	if (found != 0) {
		MODEL_FAIL("op %llu: the installed order missed or repeated entries", op);
	}
}

/*
 * Where the random choices come from: bits(ctx, n) gives a value below n (n >= 1); a
 * seeded generator for the property test, the input's bytes for the fuzz target.
 */
struct model_source {
	uint32_t (*bits)(void *ctx, uint32_t n);
	void *ctx;
};

static uint32_t model_pick(const struct model_source *src, uint32_t n)
{
	return n > 1u ? src->bits(src->ctx, n) : 0u;
}

/* An entry of the model in @p state (MODULE_FREE: any in use), or -1 when there is none. */
static int model_pick_entry(const struct model *m, const struct model_source *src,
			    enum module_state state)
{
	int which[MODEL_SLOTS], n = 0;

	for (int i = 0; i < MODEL_SLOTS; i++) {
		if (state == MODULE_FREE ? m->e[i].state != MODULE_FREE : m->e[i].state == state) {
			which[n++] = i;
		}
	}
	return n > 0 ? which[model_pick(src, (uint32_t)n)] : -1;
}

/* Mostly an entry in @p state, now and then any index, out of range ones included. */
static int model_pick_slot(const struct model *m, const struct model_source *src,
			   enum module_state state)
{
	int slot = model_pick(src, 8) < 7u ? model_pick_entry(m, src, state) : -1;

	return slot >= 0 ? slot : (int)model_pick(src, MODEL_SLOTS + 2u) - 1;
}

static const char *const model_names[] = {
	"e", "z9_-x",
	"abcdefghijklmnopqrstuvwxyz01234",  /* 31 bytes: valid */
	"",				    /* invalid: empty */
	"Bad",				    /* invalid: upper case */
	"abcdefghijklmnopqrstuvwxyz012345", /* invalid: 32 bytes */
};

static void model_step_begin(struct model *m, const struct model_source *src)
{
	uint32_t pick = model_pick(src, 20), size, manifest_len, body_len, off, largest;
	char numbered[8];
	const char *name = model_names[pick % 6u];

	if (pick < 14u) { /* more names than entries, so the entries can run out */
		(void)snprintf(numbered, sizeof(numbered), "m%u",
			       (unsigned int)model_pick(src, MODEL_SLOTS + 4u));
		name = numbered;
	}
	enum module_kind kind = (enum module_kind)(model_pick(src, 16) < 15u ? model_pick(src, 3)
									     : 3u);
	uint8_t digest[MODULE_DIGEST_LEN];
	uint8_t seed = (uint8_t)model_pick(src, 256);

	(void)model_first_fit(m, 0, &off, &largest);
	pick = model_pick(src, 20);
	if (pick < 10u) {
		size = 1u + model_pick(src, m->crowd ? 64u : MODEL_BYTES / 4u);
	} else if (pick < 13u) {
		size = 1u + model_pick(src, 64);
	} else if (pick < 15u) {
		size = largest > 0u ? largest : 1u; /* just fits */
	} else if (pick < 17u) {
		size = largest + 1u; /* one byte too many */
	} else if (pick < 18u) {
		size = 0;
	} else if (pick < 19u) {
		size = MODEL_BYTES + model_pick(src, 2); /* the arena, and one byte over */
	} else {
		size = UINT32_MAX; /* the two lengths' sum passes 32 bits */
	}
	if (size == UINT32_MAX) {
		manifest_len = UINT32_MAX - model_pick(src, 4);
		body_len = 1u + model_pick(src, 8);
	} else {
		manifest_len = model_pick(src, size + 1u);
		body_len = size - manifest_len;
	}
	for (unsigned int i = 0; i < MODULE_DIGEST_LEN; i++) {
		digest[i] = (uint8_t)(seed + i);
	}
	model_begin(m, name, kind, manifest_len, body_len, seed == 0u ? NULL : digest);
}

static void model_step_write(struct model *m, const struct model_source *src)
{
	static uint8_t data[MODEL_BYTES + 1024u];
	int slot = model_pick_slot(m, src, MODULE_INCOMPLETE);
	bool used = slot >= 0 && slot < MODEL_SLOTS && m->e[slot].state != MODULE_FREE;
	uint32_t size = used ? m->e[slot].size : 0u, received = used ? m->e[slot].received : 0u;
	uint32_t pick = model_pick(src, 20), off, rem;
	size_t len;
	uint8_t seed = (uint8_t)model_pick(src, 256);

	if (pick < 12u) {
		off = received; /* the next part */
	} else if (pick < 15u) {
		off = model_pick(src, received + 1u); /* a resend */
	} else if (pick < 17u) {
		off = received + 1u + model_pick(src, 16); /* a gap */
	} else if (pick < 18u) {
		off = UINT32_MAX - model_pick(src, 4);
	} else {
		off = model_pick(src, size + 2u);
	}
	rem = size > off ? size - off : 0u;
	pick = model_pick(src, 20);
	if (pick < 8u) {
		len = rem;
	} else if (pick < 14u) {
		len = model_pick(src, rem + 1u);
	} else if (pick < 16u) {
		len = (size_t)rem + 1u;
	} else if (pick < 17u) {
		len = SIZE_MAX - model_pick(src, 4);
	} else {
		len = model_pick(src, 512);
	}
	for (size_t i = 0; i < len && i < sizeof(data); i++) {
		data[i] = (uint8_t)(seed + i * 13u + (i >> 8));
	}
	model_write(m, slot, off, data, len);
}

/* One random operation, then the whole check. */
static void model_step(struct model *m, const struct model_source *src)
{
	uint32_t op = model_pick(src, 200);

	if (op < 60u) {
		model_step_begin(m, src);
	} else if (op < 130u) {
		model_step_write(m, src);
	} else if (op < 160u) {
		model_commit(m, model_pick_slot(m, src, MODULE_INCOMPLETE));
	} else if (op < 199u) {
		if (!m->crowd || model_pick(src, 5) == 0u) {
			model_free(m, model_pick_slot(m, src, MODULE_FREE));
		}
	} else {
		m->ops++;
		model_reset(m);
	}
	model_check(m);
}

#endif /* MODULE_CATALOG_MODEL_H */
