// SPDX-License-Identifier: MIT
/*
 * The AEAD that seals swapped pages (see seal.h), over libsodium.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>

#include <sodium.h>

#include "tierfs/seal.h"

#define SEAL_NONCE_BYTES crypto_aead_xchacha20poly1305_ietf_NPUBBYTES /* the longer one */

_Static_assert(SEAL_TAG_BYTES == crypto_aead_aes256gcm_ABYTES, "GCM tag");
_Static_assert(SEAL_TAG_BYTES == crypto_aead_xchacha20poly1305_ietf_ABYTES, "Poly1305 tag");

/* In sodium_malloc() memory: locked, kept out of core dumps, wiped when freed. */
struct seal_key {
	crypto_aead_aes256gcm_state aes; /* AES-256-GCM's expanded key */
	unsigned char key[crypto_aead_xchacha20poly1305_ietf_KEYBYTES];
	bool is_aes;
	atomic_uint_fast64_t nr_nonces;
	struct seal_key *next; /* in seal_keys, under seal_keys_lock */
};

/*
 * Every key.  Memory locks are not inherited across fork(), and the daemon
 * forks into the background after it has made its backends: the child
 * locks the keys again.
 */
static pthread_mutex_t seal_keys_lock = PTHREAD_MUTEX_INITIALIZER;
static struct seal_key *seal_keys;
static pthread_once_t seal_atfork_once = PTHREAD_ONCE_INIT;

/* fork() with seal_keys_lock held, so that the child finds the list whole. */
static void seal_atfork_prepare(void)
{
	pthread_mutex_lock(&seal_keys_lock);
}

static void seal_atfork_parent(void)
{
	pthread_mutex_unlock(&seal_keys_lock);
}

static void seal_atfork_child(void)
{
	for (struct seal_key *k = seal_keys; k; k = k->next)
		sodium_mlock(k, sizeof(*k));
	pthread_mutex_unlock(&seal_keys_lock);
}

static void seal_atfork_register(void)
{
	pthread_atfork(seal_atfork_prepare, seal_atfork_parent, seal_atfork_child);
}

int seal_key_new(bool is_aes_allowed, struct seal_key **out)
{
	struct seal_key *k;

	if (sodium_init() < 0)
		return -EIO;
	pthread_once(&seal_atfork_once, seal_atfork_register);
	k = sodium_malloc(sizeof(*k));
	if (!k)
		return -ENOMEM;
	randombytes_buf(k->key, sizeof(k->key));
	k->is_aes = is_aes_allowed && crypto_aead_aes256gcm_is_available();
	if (k->is_aes) {
		crypto_aead_aes256gcm_beforenm(&k->aes, k->key);
		sodium_memzero(k->key, sizeof(k->key));
	}
	atomic_init(&k->nr_nonces, 0);
	pthread_mutex_lock(&seal_keys_lock);
	k->next = seal_keys;
	seal_keys = k;
	pthread_mutex_unlock(&seal_keys_lock);
	*out = k;
	return 0;
}

void seal_key_free(struct seal_key *key)
{
	struct seal_key **p;

	if (!key)
		return;
	pthread_mutex_lock(&seal_keys_lock);
	for (p = &seal_keys; *p && *p != key; p = &(*p)->next)
		;
	if (*p)
		*p = key->next;
	pthread_mutex_unlock(&seal_keys_lock);
	sodium_free(key);
}

size_t seal_key_bytes(void)
{
	return sizeof(struct seal_key);
}

uint64_t seal_next_nonce(struct seal_key *key)
{
	return atomic_fetch_add_explicit(&key->nr_nonces, 1, memory_order_relaxed);
}

static void seal_le(unsigned char *out, uint64_t v, int nr_bytes)
{
	for (int i = 0; i < nr_bytes; i++)
		out[i] = (unsigned char)(v >> (8 * i));
}

/* The nonce's 12 bytes, zeros after them for XChaCha20's 24. */
static void seal_nonce_bytes(struct seal_nonce nonce, unsigned char n[SEAL_NONCE_BYTES])
{
	seal_le(n, nonce.lo, 8);
	seal_le(n + 8, nonce.hi, 4);
}

void seal_data(const struct seal_key *key, struct seal_nonce nonce, uint64_t slot, const void *in,
	       size_t len, void *out, unsigned char tag[SEAL_TAG_BYTES])
{
	unsigned char n[SEAL_NONCE_BYTES] = { 0 }, ad[8];

	seal_nonce_bytes(nonce, n);
	seal_le(ad, slot, 8);
	if (key->is_aes)
		crypto_aead_aes256gcm_encrypt_detached_afternm(out, tag, NULL, in, len, ad,
							       sizeof(ad), NULL, n, &key->aes);
	else
		crypto_aead_xchacha20poly1305_ietf_encrypt_detached(out, tag, NULL, in, len, ad,
								    sizeof(ad), NULL, n, key->key);
}

int seal_open(const struct seal_key *key, struct seal_nonce nonce, uint64_t slot, void *buf,
	      size_t len, const unsigned char tag[SEAL_TAG_BYTES])
{
	unsigned char n[SEAL_NONCE_BYTES] = { 0 }, ad[8];
	int ret;

	seal_nonce_bytes(nonce, n);
	seal_le(ad, slot, 8);
	if (key->is_aes)
		ret = crypto_aead_aes256gcm_decrypt_detached_afternm(buf, NULL, buf, len, tag, ad,
								     sizeof(ad), n, &key->aes);
	else
		ret = crypto_aead_xchacha20poly1305_ietf_decrypt_detached(
			buf, NULL, buf, len, tag, ad, sizeof(ad), n, key->key);
	return ret ? -EIO : 0;
}
