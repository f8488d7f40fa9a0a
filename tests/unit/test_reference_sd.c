/*
 * Verified SD overrides of the reference pages (app/src/tools/reference_sd.c,
 * docs/reference-format.md "SD overrides"), over the POSIX port: LittleFS at /lfs for the
 * digests, a scratch folder as the card at /SD:. A page that verifies is served with the
 * built-in topic and summary; a tampered byte, a page without a digest, a bad digest file, a
 * page over the size bound or one that is not a page is refused and the built-in page used;
 * the pool block is held only while a page is consumed; firmware_reference gives a verified
 * override's contract and the built-in one otherwise.
 */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent_cmd.h"
#include "flash_fixture.h"
#include "posix/posix_port.h"
#include "reference.h"
#include "reference_sd.h"
#include "reference_text.h"
#include "sha256.h"
#include "tools_reference.h"

#define BODY	 "# gpio - from the card\n\nThe card's own words.\n"
#define CONTRACT "card contract: gpio_read {\"slot\"} -> level"
#define PAGE	 BODY "\n## Contract\n\n" CONTRACT "\n"

static char sd_dir[64];
static char text[REFERENCE_OVERRIDE_MAX + 64];
static char result[CONFIG_AGENT_TOOL_RESULT_MAX_LEN + 1];
static const struct reference_page *builtin;

/* The card and the flash, without the pool (the boot test makes it with agent_init()). */
static int setup_without_pool(void **state)
{
	(void)state;
	builtin = &reference_builtin()->pages[0];
	snprintf(sd_dir, sizeof(sd_dir), "refsd_XXXXXX");
	if (mkdtemp(sd_dir) == NULL || flash_fixture_setup("refsd") != 0) {
		return -1;
	}
	return posix_sd_mount(sd_dir);
}

static int setup(void **state)
{
	int err = setup_without_pool(state);

	return err != 0 ? err : reference_sd_init();
}

static int teardown(void **state)
{
	char path[160];

	(void)state;
	(void)posix_sd_unmount();
	snprintf(path, sizeof(path), "%s/man/%s.md", sd_dir, builtin->topic);
	unlink(path);
	snprintf(path, sizeof(path), "%s/man", sd_dir);
	rmdir(path);
	rmdir(sd_dir);
	return flash_fixture_teardown();
}

/* Put @p len bytes of @p page on the card as the override of the built-in page. */
static void card_write(const char *page, size_t len)
{
	char path[160];
	FILE *f;

	snprintf(path, sizeof(path), "%s/man", sd_dir);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/man/%s.md", sd_dir, builtin->topic);
	f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(page, 1, len, f), len);
	fclose(f);
}

/* What the host tool does: the page on the card, its SHA-256 on the device. */
static void install(const char *page, size_t len)
{
	uint8_t digest[SHA256_DIGEST_BYTES];

	card_write(page, len);
	sha256_digest(page, len, digest);
	assert_int_equal(reference_digest_set(builtin->topic, digest), 0);
}

static int pool_visit(const struct agent_pool_stats *stats, void *user_data)
{
	int *free_blocks = user_data;

	if (strcmp(stats->name, "man") == 0) {
		*free_blocks = (int)stats->blocks_free;
		return 1;
	}
	return 0;
}

/* Free blocks of the "man" pool; -1 while there is none. */
static int man_pool_free(void)
{
	int free_blocks = -1;

	agent_pool_foreach(pool_visit, &free_blocks);
	return free_blocks;
}

static int pool_count(const struct agent_pool_stats *stats, void *user_data)
{
	*(int *)user_data += strcmp(stats->name, "man") == 0;
	return 0;
}

/* Pools named "man". */
static int man_pools(void)
{
	int n = 0;

	agent_pool_foreach(pool_count, &n);
	return n;
}

static enum reference_override_status load_and_release(void)
{
	struct reference_override ov;
	enum reference_override_status status = reference_override_load(builtin, &ov);

	if (status != REFERENCE_OVERRIDE_VERIFIED) {
		assert_null(ov.block);
	}
	reference_override_release(&ov);
	assert_true(man_pool_free() != 0); /* nothing held after the release */
	return status;
}

/*
 * The one block's pool is made at boot (agent_init()), before man (the shell thread) and
 * firmware_reference (the worker) can reach it, and once: made on first use, the two at once
 * could register two pools over the one buffer. Before, agent_init() made none and the first
 * page made it. Runs first: pools live as long as the process.
 */
static void test_the_block_is_made_at_boot_once(void **state)
{
	struct reference_override ov;

	(void)state;
	assert_int_equal(man_pools(), 0);
	install(PAGE, strlen(PAGE));
	/* No pool, no block: refused as unreadable, nothing held. */
	assert_int_equal(reference_override_load(builtin, &ov), REFERENCE_OVERRIDE_UNREADABLE);
	assert_null(ov.block);
	assert_int_equal(man_pools(), 0);
	(void)agent_init();
	assert_int_equal(man_pools(), 1);
	assert_int_equal(man_pool_free(), 1);
	(void)agent_init();
	assert_int_equal(reference_sd_init(), 0);
	assert_int_equal(man_pools(), 1);
	assert_int_equal(load_and_release(), REFERENCE_OVERRIDE_VERIFIED);
}

/* A page of exactly @p len bytes: a body of 'b' lines, the marker, a short contract. */
static size_t page_of(size_t len)
{
	static const char tail[] = "\n## Contract\nc\n";
	size_t body = len - (sizeof(tail) - 1);

	assert_true(len < sizeof(text) && body > 2);
	memset(text, 'b', body);
	for (size_t i = 79; i < body; i += 80) {
		text[i] = '\n';
	}
	memcpy(text + body, tail, sizeof(tail) - 1);
	text[len] = '\0';
	return len;
}

/* ---- tests ---------------------------------------------------------------------------------- */

static void test_no_card_or_no_file_is_the_builtin(void **state)
{
	(void)state;
	assert_int_equal(load_and_release(), REFERENCE_OVERRIDE_NONE);
	assert_int_equal(posix_sd_unmount(), 0);
	install(PAGE, strlen(PAGE)); /* on the folder, but no card is mounted */
	assert_int_equal(load_and_release(), REFERENCE_OVERRIDE_NONE);
	assert_int_equal(posix_sd_mount(sd_dir), 0);
	assert_int_equal(load_and_release(), REFERENCE_OVERRIDE_VERIFIED);
}

static void test_a_verified_page_is_served_from_one_pool_block(void **state)
{
	struct reference_override ov;

	(void)state;
	install(PAGE, strlen(PAGE));
	assert_int_equal(reference_override_load(builtin, &ov), REFERENCE_OVERRIDE_VERIFIED);
	assert_int_equal(man_pool_free(), 0); /* held while consumed */
	assert_string_equal(ov.page.topic, builtin->topic);
	assert_string_equal(ov.page.summary, builtin->summary);
	assert_int_equal(ov.page.body_len, strlen(BODY) - 1); /* the blank lines dropped */
	assert_memory_equal(ov.page.body, BODY, ov.page.body_len);
	assert_int_equal(ov.page.contract_len, strlen(CONTRACT));
	assert_memory_equal(ov.page.contract, CONTRACT, ov.page.contract_len);
	reference_override_release(&ov);
	assert_int_equal(man_pool_free(), 1); /* given back right after */
	assert_null(ov.block);
}

static void test_a_tampered_byte_is_refused(void **state)
{
	char page[sizeof(PAGE) + 1] = PAGE;

	(void)state;
	install(page, strlen(page));
	for (size_t i = 0; i < strlen(page); i += 7) {
		page[i] ^= 0x01;
		card_write(page, strlen(page));
		assert_int_equal(load_and_release(), REFERENCE_OVERRIDE_MISMATCH);
		page[i] ^= 0x01;
	}
	card_write(page, strlen(page));
	assert_int_equal(load_and_release(), REFERENCE_OVERRIDE_VERIFIED);
	/* One byte more or less is another page. */
	card_write(page, strlen(page) - 1);
	assert_int_equal(load_and_release(), REFERENCE_OVERRIDE_MISMATCH);
	strcat(page, "\n");
	card_write(page, strlen(page));
	assert_int_equal(load_and_release(), REFERENCE_OVERRIDE_MISMATCH);
}

static void test_an_unlisted_page_is_refused(void **state)
{
	uint8_t digest[SHA256_DIGEST_BYTES];

	(void)state;
	card_write(PAGE, strlen(PAGE));
	assert_int_equal(reference_digest_get(builtin->topic, digest), -ENOENT);
	assert_int_equal(load_and_release(), REFERENCE_OVERRIDE_UNLISTED);
	/* Recorded, then forgotten. */
	install(PAGE, strlen(PAGE));
	assert_int_equal(load_and_release(), REFERENCE_OVERRIDE_VERIFIED);
	assert_int_equal(reference_digest_clear(builtin->topic), 0);
	assert_int_equal(reference_digest_clear(builtin->topic), -ENOENT);
	assert_int_equal(load_and_release(), REFERENCE_OVERRIDE_UNLISTED);
}

static void test_a_digest_file_that_is_not_one_is_unlisted(void **state)
{
	static const char *const bad[] = {
		"", "0011\n",
		/* 64 digits without the line feed, upper case, a non-hex digit, one too many */
		"00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff",
		"00112233445566778899AABBCCDDEEFF00112233445566778899aabbccddeeff\n",
		"00112233445566778899aabbccddeeff00112233445566778899aabbccddeefg\n",
		"00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff0\n",
	};
	char path[96];
	uint8_t digest[SHA256_DIGEST_BYTES];

	(void)state;
	install(PAGE, strlen(PAGE));
	snprintf(path, sizeof(path), REFERENCE_DIGEST_DIR "/%s.sha256", builtin->topic);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct agent_file *f;

		assert_int_equal(agent_fs_open(&f, path,
					       AGENT_FS_O_WRITE | AGENT_FS_O_CREATE | AGENT_FS_O_TRUNC),
				 0);
		assert_int_equal(agent_fs_write(f, bad[i], strlen(bad[i])), (int)strlen(bad[i]));
		assert_int_equal(agent_fs_close(f), 0);
		assert_int_equal(reference_digest_get(builtin->topic, digest), -EBADMSG);
		assert_int_equal(load_and_release(), REFERENCE_OVERRIDE_UNLISTED);
	}
}

static void test_size_bound(void **state)
{
	(void)state;
	/* N bytes: served. */
	install(text, page_of(REFERENCE_OVERRIDE_MAX));
	assert_int_equal(load_and_release(), REFERENCE_OVERRIDE_VERIFIED);
	/* N + 1 bytes, its digest recorded all the same: refused before it is read. */
	install(text, page_of(REFERENCE_OVERRIDE_MAX + 1));
	assert_int_equal(load_and_release(), REFERENCE_OVERRIDE_TOO_LARGE);
	assert_string_equal(reference_override_why(REFERENCE_OVERRIDE_TOO_LARGE),
			    "it is larger than 8192 bytes");
}

static void test_what_is_not_a_page_is_refused(void **state)
{
	static const char *const malformed[] = {
		"no marker at all\n",
		"## Contract\nonly a contract\n",
		"a body\n## Contract\n\n\n",
		"a body\n## Contract \nwith a space after the marker\n",
		"a body\n## contract\nlower case\n",
		"a body\r\n## Contract\r\ncarriage returns\r\n",
		"a \x1b[2Jbody\n## Contract\nc\n",
		"a body\n## Contract\na tab\there\n",
		"a body\n## Contract\nDEL \x7f\n",
		"a body\n## Contract\nC1 \xc2\x9b control\n",
		"a body\n## Contract\nnot UTF-8 \xff\n",
		"a body\n## Contract\ncut \xe2\x82\n",
	};
	const char *body;
	const char *contract;
	size_t body_len;
	size_t contract_len;

	(void)state;
	for (size_t i = 0; i < sizeof(malformed) / sizeof(malformed[0]); i++) {
		if (reference_override_check(malformed[i], strlen(malformed[i]), &body, &body_len,
					     &contract, &contract_len) != -EINVAL) {
			fail_msg("accepted malformed page %zu", i);
		}
		install(malformed[i], strlen(malformed[i]));
		assert_int_equal(load_and_release(), REFERENCE_OVERRIDE_MALFORMED);
	}
	/* UTF-8 text, U+00A0 next to the C1 range, and the first marker line counts. */
	static const char good[] = "caf\xc3\xa9\xc2\xa0\n## Contract\nx\n## Contract\ny";

	assert_int_equal(reference_override_check(good, strlen(good), &body, &body_len, &contract,
						  &contract_len),
			 0);
	assert_int_equal(contract_len, strlen("x\n## Contract\ny"));
	/* The contract's bound: N and N + 1 bytes. */
	memcpy(text, "b\n## Contract\n", 14);
	memset(text + 14, 'c', REFERENCE_CONTRACT_MAX + 1);
	assert_int_equal(reference_override_check(text, 14 + REFERENCE_CONTRACT_MAX, &body,
						  &body_len, &contract, &contract_len),
			 0);
	assert_int_equal(contract_len, REFERENCE_CONTRACT_MAX);
	assert_int_equal(reference_override_check(text, 14 + REFERENCE_CONTRACT_MAX + 1, &body,
						  &body_len, &contract, &contract_len),
			 -EINVAL);
}

static void test_busy_block_falls_back_to_the_builtin(void **state)
{
	struct reference_override first;
	struct reference_override second;

	(void)state;
	install(PAGE, strlen(PAGE));
	assert_int_equal(reference_override_load(builtin, &first), REFERENCE_OVERRIDE_VERIFIED);
	assert_int_equal(reference_override_load(builtin, &second),
			 REFERENCE_OVERRIDE_UNREADABLE);
	assert_null(second.block);
	reference_override_release(&first);
	assert_int_equal(load_and_release(), REFERENCE_OVERRIDE_VERIFIED);
}

/* firmware_reference's result for the built-in page's topic, in result[]. */
static void answer(void)
{
	struct json_writer w;
	char query[64];

	snprintf(query, sizeof(query), "%s", builtin->topic);
	jw_init(&w, result, sizeof(result));
	assert_int_equal(reference_tool_answer(reference_builtin(), query, strlen(query), &w), 0);
	assert_true(jw_finish(&w) > 0);
}

static void test_firmware_reference_gives_the_verified_contract(void **state)
{
	char page[] = PAGE;
	char builtin_start[40];

	(void)state;
	snprintf(builtin_start, sizeof(builtin_start), "%.*s", 24,
		 page_text(builtin, REFERENCE_CONTRACT));
	install(page, strlen(page));
	answer();
	assert_non_null(strstr(result, "card contract: gpio_read"));
	assert_int_equal(man_pool_free(), 1);
	/* Tampered: the built-in contract. */
	page[3] ^= 0x01;
	card_write(page, strlen(page));
	answer();
	assert_null(strstr(result, "card contract"));
	assert_non_null(strstr(result, builtin_start));
	assert_int_equal(man_pool_free(), 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_the_block_is_made_at_boot_once,
						setup_without_pool, teardown),
		cmocka_unit_test_setup_teardown(test_no_card_or_no_file_is_the_builtin, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_a_verified_page_is_served_from_one_pool_block,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_a_tampered_byte_is_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_an_unlisted_page_is_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_a_digest_file_that_is_not_one_is_unlisted,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_size_bound, setup, teardown),
		cmocka_unit_test_setup_teardown(test_what_is_not_a_page_is_refused, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_busy_block_falls_back_to_the_builtin, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_firmware_reference_gives_the_verified_contract,
						setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
