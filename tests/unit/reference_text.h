/*
 * The text of one field of a reference page, packed or not (reference_reader), for the
 * tests: NUL-terminated in one of four rotating buffers, so a test can hold a few at once.
 */
#ifndef TEST_REFERENCE_TEXT_H
#define TEST_REFERENCE_TEXT_H

#include "reference.h"

#define PAGE_TEXT_MAX 8192

static __attribute__((unused)) const char *page_text(const struct reference_page *p,
						     enum reference_field field)
{
	static char bufs[4][PAGE_TEXT_MAX + 1];
	static unsigned int next;
	char *buf = bufs[next++ % 4];
	struct reference_reader r;
	size_t n;

	reference_open(&r, p, field);
	n = reference_read(&r, buf, PAGE_TEXT_MAX);
	buf[n] = '\0';
	return buf;
}

#endif /* TEST_REFERENCE_TEXT_H */
