/*
 * A model catalog for the module journal's tests: entries in installation order, an IMPORT
 * replaces the entry of its name (the new one goes last, as the catalog's installation
 * order does), a REMOVE deletes it. Replay fills it through module_journal_replay_ops;
 * compaction reads it through module_journal_live_fn. Included by one test file each, after
 * cmocka.h.
 */
#ifndef MODULE_JOURNAL_MODEL_H
#define MODULE_JOURNAL_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "module_journal.h"
#include "sha256.h"

#define MODEL_SLOTS 8
#define MODEL_TEXT  CONFIG_AGENT_CATALOG_BYTES

struct model_entry {
	enum module_kind kind;
	char name[MODULE_NAME_MAX + 1];
	uint8_t digest[MODULE_DIGEST_LEN];
	uint32_t manifest_len;
	uint32_t body_len;
	uint8_t text[MODEL_TEXT];
};

struct model {
	struct model_entry e[MODEL_SLOTS];
	int count;
	/* the replay's calls */
	int begins;
	int ends_ok;
	int ends_bad;
	int removes;
	bool open;			/* between import_begin and import_end */
	bool skip_next;			/* import_begin returns NULL once */
	bool skipping;			/* the open import was skipped */
	int skipped_ok;			/* skipped imports whose record was good */
	struct module_journal_record began; /* the last import_begin's record */
	uint8_t staging[MODEL_TEXT];
};

static inline void model_clear(struct model *m)
{
	memset(m, 0, offsetof(struct model, staging));
}

/* @p to holds the entries of @p from (the replay's counters cleared). */
static inline void model_copy(struct model *to, const struct model *from)
{
	model_clear(to);
	to->count = from->count;
	memcpy(to->e, from->e, (size_t)from->count * sizeof(from->e[0]));
}

static inline int model_find(const struct model *m, const char *name)
{
	for (int i = 0; i < m->count; i++) {
		if (strcmp(m->e[i].name, name) == 0) {
			return i;
		}
	}
	return -1;
}

static inline void model_remove(struct model *m, const char *name)
{
	int i = model_find(m, name);

	if (i >= 0) {
		memmove(&m->e[i], &m->e[i + 1], (size_t)(m->count - i - 1) * sizeof(m->e[0]));
		m->count--;
	}
}

/* Install @p rec with @p text (manifest then body) as the newest entry. */
static inline void model_install(struct model *m, const struct module_journal_record *rec,
				 const void *text)
{
	struct model_entry *e;

	model_remove(m, rec->name);
	assert_true(m->count < MODEL_SLOTS);
	e = &m->e[m->count++];
	e->kind = rec->kind;
	memcpy(e->name, rec->name, sizeof(e->name));
	memcpy(e->digest, rec->digest, sizeof(e->digest));
	e->manifest_len = rec->manifest_len;
	e->body_len = rec->body_len;
	memcpy(e->text, text, (size_t)rec->manifest_len + rec->body_len);
}

static inline bool model_equal(const struct model *a, const struct model *b)
{
	if (a->count != b->count) {
		return false;
	}
	for (int i = 0; i < a->count; i++) {
		const struct model_entry *x = &a->e[i];
		const struct model_entry *y = &b->e[i];

		if (x->kind != y->kind || strcmp(x->name, y->name) != 0 ||
		    memcmp(x->digest, y->digest, sizeof(x->digest)) != 0 ||
		    x->manifest_len != y->manifest_len || x->body_len != y->body_len ||
		    memcmp(x->text, y->text, (size_t)x->manifest_len + x->body_len) != 0) {
			return false;
		}
	}
	return true;
}

/* ---- replay callbacks --------------------------------------------------------------------- */

static inline void *model_import_begin(void *user, const struct module_journal_record *rec)
{
	struct model *m = user;

	assert_false(m->open);
	assert_int_equal(rec->type, MODULE_JOURNAL_IMPORT);
	assert_true((size_t)rec->manifest_len + rec->body_len <= sizeof(m->staging));
	m->open = true;
	m->began = *rec;
	m->begins++;
	m->skipping = m->skip_next;
	if (m->skip_next) {
		m->skip_next = false;
		return NULL;
	}
	/* Poisoned: a replay that reports a record good without filling it is caught. */
	memset(m->staging, 0xa5, (size_t)rec->manifest_len + rec->body_len);
	return m->staging;
}

static inline void model_import_end(void *user, const struct module_journal_record *rec, bool ok)
{
	struct model *m = user;

	assert_true(m->open);
	assert_memory_equal(rec, &m->began, sizeof(*rec));
	m->open = false;
	if (m->skipping) {
		m->skipped_ok += ok ? 1 : 0;
		m->ends_bad += ok ? 0 : 1;
	} else if (ok) {
		m->ends_ok++;
		model_install(m, rec, m->staging);
	} else {
		m->ends_bad++;
	}
}

static inline void model_on_remove(void *user, const struct module_journal_record *rec)
{
	struct model *m = user;

	assert_false(m->open);
	assert_int_equal(rec->type, MODULE_JOURNAL_REMOVE);
	m->removes++;
	model_remove(m, rec->name);
}

static const struct module_journal_replay_ops model_ops = {
	.import_begin = model_import_begin,
	.import_end = model_import_end,
	.remove = model_on_remove,
};

/* Replay the journal into a cleared @p m; the journal's result. */
static inline int model_replay(struct model *m, struct module_journal_report *report)
{
	int err;

	model_clear(m);
	err = module_journal_replay(&model_ops, m, report);
	assert_false(m->open);
	return err;
}

/* The live entries of the model, for compaction. */
static inline bool model_live(void *user, size_t i, struct module_journal_record *rec,
			      const void **manifest, const void **body)
{
	const struct model *m = user;
	const struct model_entry *e;

	if (i >= (size_t)m->count) {
		return false;
	}
	e = &m->e[i];
	memset(rec, 0, sizeof(*rec));
	rec->type = MODULE_JOURNAL_IMPORT;
	rec->kind = e->kind;
	memcpy(rec->name, e->name, sizeof(rec->name));
	memcpy(rec->digest, e->digest, sizeof(rec->digest));
	rec->manifest_len = e->manifest_len;
	rec->body_len = e->body_len;
	*manifest = e->text;
	*body = e->text + e->manifest_len;
	return true;
}

/* ---- making modules ----------------------------------------------------------------------- */

/*
 * A module's record and text: @p manifest_len bytes of manifest-like lines, then a body of
 * @p body_len bytes, both derived from @p seed; the digest over both.
 */
static inline void make_module(struct module_journal_record *rec, uint8_t *text, const char *name,
			       enum module_kind kind, uint32_t manifest_len, uint32_t body_len,
			       unsigned int seed)
{
	uint32_t len = manifest_len + body_len;

	memset(rec, 0, sizeof(*rec));
	rec->type = MODULE_JOURNAL_IMPORT;
	rec->kind = kind;
	strncpy(rec->name, name, MODULE_NAME_MAX);
	rec->manifest_len = manifest_len;
	rec->body_len = body_len;
	for (uint32_t i = 0; i < len; i++) {
		text[i] = (uint8_t)(i % 61u == 60u ? '\n' : 'a' + (i * 7u + seed) % 26u);
	}
	sha256_digest(text, len, rec->digest);
}

/* Append the IMPORT of a module made by make_module() and apply it to @p m. */
static inline int model_append_import(struct model *m, const char *name, enum module_kind kind,
				      uint32_t manifest_len, uint32_t body_len, unsigned int seed)
{
	static uint8_t text[MODEL_TEXT];
	struct module_journal_record rec;
	int err;

	make_module(&rec, text, name, kind, manifest_len, body_len, seed);
	err = module_journal_append_import(&rec, text, text + manifest_len);
	if (err == 0 && m != NULL) {
		model_install(m, &rec, text);
	}
	return err;
}

static inline int model_append_remove(struct model *m, const char *name)
{
	int err = module_journal_append_remove(name);

	if (err == 0 && m != NULL) {
		model_remove(m, name);
	}
	return err;
}

#endif /* MODULE_JOURNAL_MODEL_H */
