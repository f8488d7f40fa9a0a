/*
 * The memory store (memory_store.h; the format is in docs/memory.md): a header and the notes
 * in the order they were written, each record with its own CRC-32. A write copies the
 * records it keeps and the new one into MEMORY_STORE_TEMP, syncs it and renames it over
 * MEMORY_STORE_PATH (LittleFS replaces atomically). Reading stops at the first record that
 * does not check, so only a damaged medium can lose notes, and then only the damaged tail.
 */
#if defined(CONFIG_AGENT_TOOLS_MEMORY)

#include "memory_store.h"

#include <errno.h>
#include <string.h>

#include "agent_fs_io.h"
#include "agent_port.h"

static const uint8_t magic[4] = {'A', 'M', 'E', 'M'};

/* One record at a time (the tools run one at a time). */
static uint8_t record[MEMORY_RECORD_BYTES(MEMORY_NOTE_MAX) + 4] AGENT_PSRAM_ATTR;

uint32_t memory_crc32(uint32_t crc, const void *data, size_t len)
{
	const uint8_t *p = data;

	crc = ~crc;
	for (size_t i = 0; i < len; i++) {
		crc ^= p[i];
		for (int bit = 0; bit < 8; bit++) {
			crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
		}
	}
	return ~crc;
}

static void put_le16(uint8_t *out, uint16_t v)
{
	out[0] = (uint8_t)v;
	out[1] = (uint8_t)(v >> 8);
}

static void put_le32(uint8_t *out, uint32_t v)
{
	put_le16(out, (uint16_t)v);
	put_le16(out + 2, (uint16_t)(v >> 16));
}

static uint16_t get_le16(const uint8_t *in)
{
	return (uint16_t)(in[0] | (in[1] << 8));
}

static uint32_t get_le32(const uint8_t *in)
{
	return get_le16(in) | ((uint32_t)get_le16(in + 2) << 16);
}

/*
 * Quantising and comparing in integer arithmetic only: a core without an FPU (a Cortex-M33
 * built without one) would otherwise link the floating-point library (about 4 KiB of flash)
 * for these few lines. A single is read as its bits: for values >= 0 the bits order as the
 * values do, and a normal one is (2^23 + f) * 2^(e - 150).
 */
#define SINGLE_ABS_MASK	  0x7FFFFFFFu
#define SINGLE_3E38	  0x7F61B1E6u /* 3.0e38f: larger, infinite and NaN values are refused */
#define SINGLE_127_MIN	  0x03FE0000u /* 127 * 2^-126: max / 127 is a normal single */

static uint32_t single_bits_of(float v)
{
	uint32_t bits;

	memcpy(&bits, &v, sizeof(bits));
	return bits;
}

/* The 24-bit significand of |bits| (with its leading 1 when normal) and its power of two. */
static uint32_t significand(uint32_t abs_bits, int *e2)
{
	uint32_t biased = abs_bits >> 23;

	*e2 = (biased != 0 ? (int)biased : 1) - 150;
	return (abs_bits & 0x7FFFFFu) | (biased != 0 ? 0x800000u : 0u);
}

/* floor(n / d) for a quotient below 2^bits, by shifts and subtractions. */
static uint32_t small_quotient(uint64_t n, uint64_t d, unsigned int bits)
{
	uint32_t q = 0;

	for (unsigned int b = bits; b-- > 0;) {
		if (n >= d << b) {
			n -= d << b;
			q |= 1u << b;
		}
	}
	return q;
}

/* The single nearest to max / 127 (max normal, at least 127 * 2^-126), ties to even. */
static uint32_t scale_bits(uint32_t max_bits)
{
	int e2;
	uint32_t m = significand(max_bits, &e2);
	uint32_t n = m << 8; /* 2^31 <= n < 2^32 */
	uint32_t q = n / 127u;   /* 25 or 26 bits */
	bool sticky = n % 127u != 0;
	unsigned int cut = q >> 25 != 0 ? 2u : 1u;
	uint32_t rest = q & ((1u << cut) - 1u);
	uint32_t half = 1u << (cut - 1);
	uint32_t mant = q >> cut;

	mant += rest > half || (rest == half && (sticky || (mant & 1u) != 0));
	e2 += (int)cut - 8;
	if (mant >> 24 != 0) {
		mant >>= 1;
		e2++;
	}
	return ((uint32_t)(e2 + 150) << 23) | (mant & 0x7FFFFFu);
}

int memory_quantise(const float *v, size_t dim, struct memory_vec *out)
{
	uint32_t max = 0;
	uint32_t scale;
	int max_e2;
	uint32_t max_m;

	if (dim != MEMORY_DIM) {
		return -EINVAL;
	}
	for (size_t i = 0; i < dim; i++) {
		uint32_t a = single_bits_of(v[i]) & SINGLE_ABS_MASK;

		if (a > SINGLE_3E38) {
			return -EINVAL;
		}
		max = a > max ? a : max;
	}
	/* All zeros, or so small that the scale would be 0 or subnormal: no direction. */
	if (max < SINGLE_127_MIN) {
		return -EINVAL;
	}
	scale = scale_bits(max);
	memcpy(&out->scale, &scale, sizeof(scale));
	max_m = significand(max, &max_e2);
	for (size_t i = 0; i < dim; i++) {
		uint32_t bits = single_bits_of(v[i]);
		int e2;
		uint32_t m = significand(bits & SINGLE_ABS_MASK, &e2);
		int down = max_e2 - e2; /* |v| <= max: >= 0 */
		uint32_t q = 0;

		/* round(127 * |v| / max), half away from zero: 0 when |v| / max < 2^-9. */
		if (down <= 9) {
			uint64_t n = 254u * (uint64_t)m + ((uint64_t)max_m << down);
			uint64_t d = (uint64_t)max_m << (down + 1);

			q = small_quotient(n, d, 8);
		}
		out->q[i] = (int8_t)((bits >> 31) != 0 ? -(int32_t)q : (int32_t)q);
	}
	return 0;
}

/* floor(sqrt(n)), a bit at a time. */
static uint64_t isqrt64(uint64_t n)
{
	uint64_t root = 0;
	uint64_t bit = (uint64_t)1 << 62;

	while (bit > n) {
		bit >>= 2;
	}
	for (; bit != 0; bit >>= 2) {
		if (n >= root + bit) {
			n -= root + bit;
			root = (root >> 1) + bit;
		} else {
			root >>= 1;
		}
	}
	return root;
}

int32_t memory_cosine_e4(const int8_t *a, const int8_t *b, size_t dim)
{
	int64_t dot = 0;
	uint64_t na = 0;
	uint64_t nb = 0;
	uint64_t product;
	unsigned int half_shift = 0;
	uint64_t norm;
	uint64_t mag;
	uint32_t q;

	for (size_t i = 0; i < dim; i++) {
		dot += (int32_t)a[i] * b[i];
		na += (uint32_t)((int32_t)a[i] * a[i]);
		nb += (uint32_t)((int32_t)b[i] * b[i]);
	}
	if (na == 0 || nb == 0) {
		return 0;
	}
	/* na, nb <= 1024 * 128^2 = 2^24: the product fits, and is scaled up by 4^k below 2^62
	 * so that its root, norm = sqrt(na * nb) * 2^k, has 31 bits or more. */
	product = na * nb;
	while ((product >> 60) == 0) {
		product <<= 2;
		half_shift++;
	}
	norm = isqrt64(product);
	mag = (uint64_t)(dot < 0 ? -dot : dot) << half_shift;
	/* round(10000 * |dot| / sqrt(na * nb)): |dot| <= the root (Cauchy-Schwarz). */
	q = small_quotient(20000u * mag + norm, 2u * norm, 15);
	if (q > 10000) {
		q = 10000;
	}
	return dot < 0 ? -(int32_t)q : (int32_t)q;
}

/* All @p len bytes: 0, -ENODATA when the file ends first, or the errno. */
static int read_full(struct agent_file *file, void *buf, size_t len)
{
	int n = agent_fs_read_exact(file, buf, len);

	return n < 0 ? n : ((size_t)n < len ? -ENODATA : 0);
}

static int write_full(struct agent_file *file, const void *buf, size_t len)
{
	int n = agent_fs_write(file, buf, len);

	if (n < 0) {
		return n;
	}
	return (size_t)n == len ? 0 : -ENOSPC;
}

/* Called with each record that checks, in `record`; non-zero stops the scan with it. */
typedef int (*record_fn)(void *user_data, uint32_t id, uint16_t text_len);

struct scan {
	uint32_t next_id; /* from the header; 1 for a new store */
	uint16_t notes;
};

/*
 * Read the store. Without a file, or with a header of another format or dimension, it is
 * empty. Returns 0, the callback's value, or the file system's error.
 */
static int scan_store(struct scan *s, record_fn fn, void *user_data)
{
	struct agent_file *file;
	uint8_t head[MEMORY_HEADER_BYTES];
	int err;

	s->next_id = 1;
	s->notes = 0;
	err = agent_fs_open(&file, MEMORY_STORE_PATH, AGENT_FS_O_READ);
	if (err == -ENOENT) {
		return 0;
	}
	if (err != 0) {
		return err;
	}
	err = read_full(file, head, sizeof(head));
	if (err != 0 || memcmp(head, magic, sizeof(magic)) != 0 || head[4] != MEMORY_VERSION ||
	    get_le32(head + 12) != memory_crc32(0, head, 12)) {
		(void)agent_fs_close(file);
		return err == -ENODATA ? 0 : (err < 0 ? err : 0);
	}
	s->next_id = get_le32(head + 8);
	if (get_le16(head + 6) != MEMORY_DIM) {
		(void)agent_fs_close(file);
		return 0;
	}
	while (true) {
		uint16_t len;
		size_t total;

		err = read_full(file, record, MEMORY_RECORD_FIXED - 4);
		if (err != 0) {
			break;
		}
		len = get_le16(record + 4);
		if (len == 0 || len > MEMORY_NOTE_MAX || get_le16(record + 6) != 0) {
			break;
		}
		total = MEMORY_RECORD_BYTES(len);
		err = read_full(file, record + MEMORY_RECORD_FIXED - 4,
				total - (MEMORY_RECORD_FIXED - 4));
		if (err != 0 || get_le32(record + total - 4) != memory_crc32(0, record, total - 4)) {
			break;
		}
		s->notes++;
		if (fn != NULL) {
			err = fn(user_data, get_le32(record), len);
			if (err != 0) {
				(void)agent_fs_close(file);
				return err;
			}
		}
	}
	(void)agent_fs_close(file);
	/* A short or damaged tail ends the store; anything else is the medium's error. */
	return err == -ENODATA || err >= 0 ? 0 : err;
}

int memory_store_count(uint16_t *notes)
{
	struct scan s;
	int err = scan_store(&s, NULL, NULL);

	*notes = s.notes;
	return err;
}

struct copy {
	struct agent_file *out;
	uint16_t skip; /* the oldest records left behind */
	uint16_t seen;
	uint32_t evicted;
};

static int copy_record(void *user_data, uint32_t id, uint16_t text_len)
{
	struct copy *c = user_data;

	if (c->seen++ < c->skip) {
		c->evicted = id;
		return 0;
	}
	return write_full(c->out, record, MEMORY_RECORD_BYTES(text_len));
}

static int write_temp(const struct scan *before, const struct memory_vec *vec, const char *text,
		      uint16_t len, struct memory_add_result *result)
{
	struct copy c = {.skip = 0};
	uint8_t head[MEMORY_HEADER_BYTES] = {0};
	struct scan again;
	uint32_t scale_bits;
	size_t total = MEMORY_RECORD_BYTES(len);
	int err;
	int closed;

	if (before->notes >= CONFIG_AGENT_MEMORY_NOTES) {
		c.skip = (uint16_t)(before->notes - CONFIG_AGENT_MEMORY_NOTES + 1);
	}
	result->id = before->next_id;
	result->notes = (uint16_t)(before->notes - c.skip + 1);
	err = agent_fs_open(&c.out, MEMORY_STORE_TEMP,
			    AGENT_FS_O_WRITE | AGENT_FS_O_CREATE | AGENT_FS_O_TRUNC);
	if (err != 0) {
		return err;
	}
	memcpy(head, magic, sizeof(magic));
	head[4] = MEMORY_VERSION;
	put_le16(head + 6, MEMORY_DIM);
	put_le32(head + 8, result->id + 1);
	put_le32(head + 12, memory_crc32(0, head, 12));
	err = write_full(c.out, head, sizeof(head));
	if (err == 0) {
		err = scan_store(&again, copy_record, &c);
	}
	if (err == 0 && again.notes != before->notes) {
		err = -EIO; /* the store changed under us: nothing else writes it */
	}
	if (err == 0) {
		memcpy(&scale_bits, &vec->scale, sizeof(scale_bits));
		put_le32(record, result->id);
		put_le16(record + 4, len);
		put_le16(record + 6, 0);
		put_le32(record + 8, scale_bits);
		memcpy(record + 12, vec->q, MEMORY_DIM);
		memcpy(record + 12 + MEMORY_DIM, text, len);
		put_le32(record + total - 4, memory_crc32(0, record, total - 4));
		err = write_full(c.out, record, total);
	}
	if (err == 0) {
		err = agent_fs_sync(c.out);
	}
	closed = agent_fs_close(c.out);
	result->evicted = c.evicted;
	return err != 0 ? err : closed;
}

int memory_store_add(const struct memory_vec *vec, const char *text, size_t len,
		     struct memory_add_result *result)
{
	struct scan before;
	int err;

	if (len == 0 || len > MEMORY_NOTE_MAX) {
		return -EINVAL;
	}
	err = agent_fs_mkdir(MEMORY_STORE_DIR);
	if (err != 0 && err != -EEXIST) {
		return err;
	}
	/* A file left by a write the power cut short. */
	err = agent_fs_unlink(MEMORY_STORE_TEMP);
	if (err != 0 && err != -ENOENT) {
		return err;
	}
	err = scan_store(&before, NULL, NULL);
	if (err == 0) {
		err = write_temp(&before, vec, text, (uint16_t)len, result);
	}
	if (err == 0) {
		err = agent_fs_rename(MEMORY_STORE_TEMP, MEMORY_STORE_PATH);
	}
	if (err != 0) {
		(void)agent_fs_unlink(MEMORY_STORE_TEMP);
	}
	return err;
}

struct nearest {
	const struct memory_vec *query;
	struct memory_hit *hits;
	size_t max;
	size_t found;
};

static int consider(void *user_data, uint32_t id, uint16_t text_len)
{
	struct nearest *n = user_data;
	int32_t score = memory_cosine_e4(n->query->q, (const int8_t *)record + 12, MEMORY_DIM);
	size_t at = n->found;

	/* Records come oldest first: a newer note goes before an older one of equal score. */
	while (at > 0 && n->hits[at - 1].score_e4 <= score) {
		at--;
	}
	if (at >= n->max) {
		return 0;
	}
	size_t last = n->found < n->max ? n->found : n->max - 1;

	memmove(&n->hits[at + 1], &n->hits[at], (last - at) * sizeof(n->hits[0]));
	n->hits[at].id = id;
	n->hits[at].score_e4 = score;
	n->hits[at].len = text_len;
	memcpy(n->hits[at].text, record + 12 + MEMORY_DIM, text_len);
	n->hits[at].text[text_len] = '\0';
	if (n->found < n->max) {
		n->found++;
	}
	return 0;
}

int memory_store_nearest(const struct memory_vec *query, struct memory_hit *hits, size_t max,
			 size_t *found, uint16_t *notes)
{
	struct nearest n = {.query = query, .hits = hits, .max = max};
	struct scan s;
	int err = scan_store(&s, consider, &n);

	*found = n.found;
	*notes = s.notes;
	return err;
}

#endif /* CONFIG_AGENT_TOOLS_MEMORY */
