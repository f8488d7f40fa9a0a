/*
 * A small client over the POSIX port's network stream, for tests/test_net_tls.py (not a
 * ctest): connect, send one request, read until the stream ends, and report each step.
 *
 *   net_probe HOST PORT TLS CAFILE [REQUEST [CHUNK_BYTES]]
 *
 * TLS is 0 or 1; CAFILE is a PEM file added with posix_net_add_ca_file(), or "-" for none.
 * Output, one item per line: "ca <result>" (when a file is given), "connect <rc>", and on
 * success "send <rc>", "payload <hex of all bytes received>", "end <last recv result>"; last
 * "heap <free before> <lowest free while receiving> <most allocated> <free after close>", the
 * simulated internal heap (posix/heap.c), from which OpenSSL allocates for a TLS connection
 * (the lowest is the free figure after connecting when nothing was received or connect
 * failed). Results are the port's return values (0, counts, negative errno). Exit status 0
 * unless the arguments are wrong.
 *
 * With NET_PROBE_HEAP_LEFT=N in the environment the probe first takes all of the heap but N
 * bytes (a multiple of its 16-byte unit), so a connection finds only N free.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent_port.h"
#include "posix/posix_port.h"

#define PROBE_TIMEOUT_MS 5000

static size_t heap_free_now(void)
{
	size_t free_bytes = 0;

	(void)agent_heap_free(AGENT_MEM_INTERNAL, &free_bytes);
	return free_bytes;
}

static void heap_report(size_t before, size_t lowest)
{
	struct agent_heap_stats st;

	(void)agent_heap_stats(AGENT_MEM_INTERNAL, &st);
	printf("heap %zu %zu %zu %zu\n", before, lowest, st.max_allocated_bytes, st.free_bytes);
}

int main(int argc, char **argv)
{
	static char buf[65536];
	struct agent_net *net = NULL;
	const char *request = "hello\n";
	size_t chunk = sizeof(buf);
	const char *left = getenv("NET_PROBE_HEAP_LEFT");
	size_t before;
	size_t lowest;
	unsigned long port;
	int rc;

	if (argc < 5 || argc > 7) {
		fprintf(stderr, "usage: net_probe HOST PORT TLS CAFILE [REQUEST [CHUNK_BYTES]]\n");
		return 2;
	}
	port = strtoul(argv[2], NULL, 10);
	if (argc >= 6) {
		request = argv[5];
	}
	if (argc == 7) {
		chunk = strtoul(argv[6], NULL, 10);
		if (chunk == 0 || chunk > sizeof(buf)) {
			fprintf(stderr, "net_probe: CHUNK_BYTES must be 1..%zu\n", sizeof(buf));
			return 2;
		}
	}
	if (strcmp(argv[4], "-") != 0) {
		printf("ca %d\n", posix_net_add_ca_file(argv[4]));
	}
	if (left != NULL) {
		size_t keep = strtoul(left, NULL, 10);

		if (keep > POSIX_HEAP_INTERNAL_BYTES ||
		    (keep < POSIX_HEAP_INTERNAL_BYTES &&
		     posix_heap_alloc(AGENT_MEM_INTERNAL, POSIX_HEAP_INTERNAL_BYTES - keep) == NULL)) {
			fprintf(stderr, "net_probe: cannot leave %zu bytes of the heap\n", keep);
			return 2;
		}
	}
	before = heap_free_now();
	rc = agent_net_connect(&net, argv[1], (uint16_t)port, strcmp(argv[3], "1") == 0,
			       PROBE_TIMEOUT_MS, NULL);
	printf("connect %d\n", rc);
	lowest = heap_free_now();
	if (rc != 0) {
		heap_report(before, lowest);
		return 0;
	}
	printf("send %d\n", agent_net_send(net, request, strlen(request), PROBE_TIMEOUT_MS, NULL));
	printf("payload ");
	while ((rc = agent_net_recv(net, buf, chunk, PROBE_TIMEOUT_MS, NULL)) > 0) {
		for (int i = 0; i < rc; i++) {
			printf("%02x", (unsigned char)buf[i]);
		}
		if (heap_free_now() < lowest) {
			lowest = heap_free_now();
		}
	}
	printf("\nend %d\n", rc);
	agent_net_close(net);
	heap_report(before, lowest);
	return 0;
}
