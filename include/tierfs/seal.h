/* SPDX-License-Identifier: MIT */
/*
 * Sealing swapped pages: an AEAD under a random key made for one backend
 * that never leaves the daemon's memory.  AES-256-GCM where the CPU does it
 * in hardware, XChaCha20-Poly1305 elsewhere.  The caller keeps the nonce in
 * its own memory (96 bits never used twice with the key: a number from
 * seal_next_nonce, or a slot and how many times it was sealed) and passes
 * the slot as associated data, so what is stored outside cannot be
 * replayed from an older store nor moved to another slot.
 */
#ifndef TIERFS_SEAL_H
#define TIERFS_SEAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SEAL_TAG_BYTES 16

struct seal_key;

/* The nonce's low 64 bits and its next 32. */
struct seal_nonce {
	uint64_t lo;
	uint32_t hi;
};

/*
 * A fresh key in locked memory kept out of core dumps, locked again in a
 * forked child.  AES only where is_aes_allowed.  Returns 0, -ENOMEM or -EIO.
 */
int seal_key_new(bool is_aes_allowed, struct seal_key **out);

/* Wipe and free key (NULL is fine). */
void seal_key_free(struct seal_key *key);

/* The daemon memory a key takes. */
size_t seal_key_bytes(void);

/* A nonce never returned before for key. */
uint64_t seal_next_nonce(struct seal_key *key);

/* Seal len bytes of in (in place if out == in) under nonce, slot as associated data. */
void seal_data(const struct seal_key *key, struct seal_nonce nonce, uint64_t slot, const void *in,
	       size_t len, void *out, unsigned char tag[SEAL_TAG_BYTES]);

/* Open len sealed bytes of buf in place.  Returns 0, or -EIO when they do not verify. */
int seal_open(const struct seal_key *key, struct seal_nonce nonce, uint64_t slot, void *buf,
	      size_t len, const unsigned char tag[SEAL_TAG_BYTES]);

#endif
