/*
 * A small client over the POSIX port's network stream, for tests/test_net_tls.py (not a
 * ctest): connect, send one request, read until the stream ends, and report each step.
 *
 *   net_probe HOST PORT TLS CAFILE [REQUEST [CHUNK_BYTES]]
 *
 * TLS is 0 or 1; CAFILE is a PEM file added with posix_net_add_ca_file(), or "-" for none.
 * Output, one item per line: "ca <result>" (when a file is given), "connect <rc>", and on
 * success "send <rc>", "payload <hex of all bytes received>", "end <last recv result>".
 * Results are the port's return values (0, counts, negative errno). Exit status 0 unless the
 * arguments are wrong.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent_port.h"
#include "posix/posix_port.h"

#define PROBE_TIMEOUT_MS 5000

int main(int argc, char **argv)
{
	static char buf[65536];
	struct agent_net *net = NULL;
	const char *request = "hello\n";
	size_t chunk = sizeof(buf);
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
	rc = agent_net_connect(&net, argv[1], (uint16_t)port, strcmp(argv[3], "1") == 0,
			       PROBE_TIMEOUT_MS, NULL);
	printf("connect %d\n", rc);
	if (rc != 0) {
		return 0;
	}
	printf("send %d\n", agent_net_send(net, request, strlen(request), PROBE_TIMEOUT_MS, NULL));
	printf("payload ");
	while ((rc = agent_net_recv(net, buf, chunk, PROBE_TIMEOUT_MS, NULL)) > 0) {
		for (int i = 0; i < rc; i++) {
			printf("%02x", (unsigned char)buf[i]);
		}
	}
	printf("\nend %d\n", rc);
	agent_net_close(net);
	return 0;
}
