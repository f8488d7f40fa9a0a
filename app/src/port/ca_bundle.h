/*
 * The root CA certificates the firmware trusts for TLS, compiled into the image. The C
 * source is generated at build time by scripts/gen_ca_bundle.py from the PEM files in
 * app/certs/ (see docs/tls.md); both ports load it. Only port code includes this header.
 */
#ifndef AGENT_CA_BUNDLE_H
#define AGENT_CA_BUNDLE_H

#include <stddef.h>
#include <stdint.h>

struct agent_ca_cert {
	const char *name; /* the PEM file's name without ".pem", e.g. "ISRG_Root_X1" */
	const uint8_t *der;
	size_t der_bytes;
};

extern const struct agent_ca_cert agent_ca_bundle[];
extern const size_t agent_ca_bundle_count;

#endif /* AGENT_CA_BUNDLE_H */
