/* SPDX-License-Identifier: MIT */
/*
 * Swap backends: where evicted pages go.  An ops table over page slots with
 * batched store, load and free.  A backend is one .c file in backends/
 * ending with a designated-initializer instance, listed in backend_table
 * when meson built it in (it leaves out one whose library is missing).
 *
 * Slots are the backend's to choose and name (a slot number < 2^61).  All
 * operations are thread-safe; a backend shards its locks as it sees fit.
 */
#ifndef TIERFS_BACKEND_H
#define TIERFS_BACKEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "tierfs/pagemap.h"

struct codec;
struct tier_backend;

struct backend_config {
	uint64_t capacity_bytes;   /* of stored (uncompressed) page data */
	const struct codec *codec; /* zpool: the compressor */
	int codec_level;
	const char *path;	/* file: the swap file to create */
	bool is_plaintext;	/* file: write pages as they are, unsealed */
	bool is_xchacha;	/* file: XChaCha20-Poly1305 even with AES in hardware */
	unsigned int nr_shards; /* zpool: 0 = one per 64 MiB of slot space */
	bool is_raw_refused;	/* zpool: refuse a page it would store raw (a chain's pool) */
	/* A chain (backend=zpool+file:PATH): capacity_bytes and path are the file's. */
	const struct tier_backend_ops *upper; /* the RAM tier in front of the file */
	uint64_t upper_capacity_bytes;	      /* its slots, of uncompressed data */
	uint64_t pool_max_bytes;	      /* the RAM tier's bound at the start */
	const struct tier_backend_ops *lower; /* a chain's last tier: file (NULL) or redis */
	/* redis that spills (redis://...+file:PATH): the file for what it turns away */
	const char *spill_path;
	uint64_t spill_capacity_bytes;
	/* redis (backend=redis://HOST:PORT[,...]): path is the seed list after redis:// */
	const char *redis_auth_path;   /* "PASSWORD" or "USER PASSWORD", the daemon's alone */
	unsigned int redis_timeout_ms; /* a request's bound, retries included; 0: 5000 */
	unsigned int redis_ttl_s;      /* the keys' time to live, re-armed; 0: none */
	unsigned int redis_wait;       /* replicas that must have a store before it is done */
};

/* store(): a page the backend refused with is_raw_refused (no slot taken). */
#define BACKEND_SLOT_REFUSED UINT64_MAX

/* Counters every backend keeps; monotonic except the first four. */
struct backend_stats {
	uint64_t stored_pages; /* pages held now */
	uint64_t stored_bytes; /* their uncompressed size */
	uint64_t pool_bytes;   /* memory or disk the backend uses for them */
	uint64_t capacity_bytes;
	uint64_t raw_page_bytes;		/* RAM backends: memory a page stored raw takes */
	uint64_t index_page_bytes;		/* RAM backends: index a stored page takes */
	uint64_t ram_bytes;			/* daemon memory: a RAM pool, slot metadata */
	uint64_t nr_stores, nr_loads, nr_frees; /* pages */
	uint64_t nr_store_errors, nr_load_errors;
	uint64_t nr_reject_full;      /* stores refused: no room */
	uint64_t nr_reject_alloc;     /* stores refused: backend memory */
	uint64_t nr_reject_raw;	      /* zpool: stored raw, compressed too poorly */
	uint64_t nr_lock_contended;   /* zpool: shard lock found taken */
	uint64_t nr_shards;	      /* zpool: lock domains; 0: contention not counted */
	uint64_t max_shard_contended; /* zpool: nr_lock_contended of the busiest shard */
	uint64_t nr_decrypt_errors;   /* file: loads whose seal failed, in nr_load_errors too */
	uint64_t meta_bytes;	      /* file: daemon memory for slots: bitmap, seals, key, rings */
	uint64_t nr_fallback_buffered; /* file: no O_DIRECT, I/O via the page cache */
	uint64_t nr_fallback_sparse;   /* file: no fallocate, a store may find no space */
};

/* One tier of a chain, first (RAM) to last (file): zpool, redis, file at most. */
struct backend_tier_stats {
	const char *name;	      /* "zpool", "ramdisk", "redis", "file" */
	bool is_sync;		      /* its loads wait for no I/O */
	struct backend_stats st;      /* the tier's own counters */
	uint64_t pool_max_bytes;      /* RAM tier: the bound in force; 0 elsewhere */
	uint64_t nr_writebacks;	      /* RAM tier: written back; the next (redis+file: both) got */
	uint64_t nr_writeback_errors; /* RAM tier: pages whose writeback failed, kept */
	uint64_t nr_rejects;	      /* all but the last: pages it did not take, sent on */
	uint64_t nr_rejects_huge;     /* ...of them: incompressible (zram's huge pages) */
	uint64_t nr_rejects_full;     /* ...of them: the tier was at its bound or full */
	uint64_t nr_rejects_error;    /* ...of them: its store failed */
};

#define BACKEND_MAX_TIERS 3

/* One server of a remote backend (redis): a cluster's node, or the one server. */
struct backend_node_stats {
	char name[280];			     /* HOST:PORT */
	bool is_master;			     /* serves hash slots by the map in force */
	bool is_down;			     /* the last connection to it failed */
	uint64_t stored_pages, stored_bytes; /* held there now, by the map; bytes as sent */
	uint64_t nr_round_trips;	     /* pipelines sent */
	uint64_t nr_commands;
	uint64_t nr_redirects; /* MOVED, ASK, TRYAGAIN */
	uint64_t nr_errors;    /* connections lost or refused, error replies */
	uint64_t nr_failovers; /* times its slots went to another node while it was down */
	uint64_t latency_p50_us, latency_p99_us; /* of a round trip, upper bounds */
};

#define BACKEND_MAX_NODES 16

/*
 * How far grow goes: slots for this many times RAM, all of RAM compressed
 * that much (same-filled pages take no slot).  Each shard is a few KiB and
 * a mapping: a remount to a size= far past that would cost memory the
 * budget does not see.
 */
#define BACKEND_GROW_MAX_RAM 32

struct tier_backend_ops {
	const char *name;   /* "zpool", "ramdisk", "file" */
	bool is_sync;	    /* loads complete in memory, no I/O wait */
	bool is_compressed; /* pool_bytes is compressed data; nr_reject_raw counts */

	int (*create)(const struct backend_config *cfg, struct tier_backend **out);
	void (*destroy)(struct tier_backend *b);

	/*
	 * Store nr pages (PAGE_SIZE bytes each), setting slots[i] for each.
	 * Stores a prefix: returns how many pages were stored (the first n;
	 * 0 when nr is 0), or -errno when none was: -ENOSPC full, -ENOMEM,
	 * -EIO, or the file backend's failed write's own (-EFBIG past
	 * RLIMIT_FSIZE, as the kernel gave it).  The pages may be reused as
	 * soon as it returns.
	 */
	int (*store)(struct tier_backend *b, void *const *pages, unsigned int nr, uint64_t *slots);

	/*
	 * Load nr slots into pages.  Returns 0, or -errno and then no page's
	 * content is defined: -EIO (a slot that is not stored included),
	 * -ENOMEM when the backend had no memory for the load, or the file
	 * backend's failed read's own.  Slots stay allocated.
	 */
	int (*load)(struct tier_backend *b, const uint64_t *slots, void *const *pages,
		    unsigned int nr);

	/*
	 * A key that orders stored slots as the backend lays them out, so that
	 * loads in key order read runs: the chain's slots by tier, then by the
	 * tier's slot.  NULL: the slots' own order.
	 */
	uint64_t (*locate)(struct tier_backend *b, uint64_t slot);

	/* Release slots (they must be allocated). */
	void (*free)(struct tier_backend *b, const uint64_t *slots, unsigned int nr);

	void (*get_stats)(struct tier_backend *b, struct backend_stats *st);

	/*
	 * file (NULL elsewhere): whether the backend may use path
	 * (backend=file:PATH), which others may have prepared: a symlink
	 * there is never followed; an existing file is trusted (for its
	 * size, never opened) only if it is regular and owned by root or the
	 * effective uid; the directory that holds the swap file (path itself,
	 * or its parent) and each directory above it must be owned by root or
	 * the effective uid and not writable by group or others unless
	 * sticky.  Returns 0 and *st from lstat(path) (st_mode 0 when nothing
	 * is there), or -errno (-ELOOP a symlink, -EPERM an owner or mode,
	 * -ENOTDIR, -EINVAL not a file or directory, lstat's or realpath's
	 * own) with why saying which path and why, e.g. "/tmp/x is owned by
	 * uid 65534, not by root".  create() runs it too.
	 */
	int (*check_path)(const char *path, struct stat *st, char *why, size_t why_len);

	/*
	 * Which of get_tiers()'s tiers holds the stored slot, 0 for the first
	 * (a file's pages by tier, for tierctl files).  NULL: one tier.
	 */
	unsigned int (*tier_of)(struct tier_backend *b, uint64_t slot);

	/* A chain (NULL elsewhere): its tiers' stats, up to max; returns how many. */
	unsigned int (*get_tiers)(struct tier_backend *b, struct backend_tier_stats *out,
				  unsigned int max);

	/* A chain: bound its RAM tier's pool_bytes (writeback keeps it under). */
	void (*set_pool_max)(struct tier_backend *b, uint64_t bytes);

	/*
	 * A RAM backend as a chain's first tier: refuse, as full, a store
	 * whose memory would take pool_bytes past bytes (UINT64_MAX: none).
	 */
	void (*set_pool_bound)(struct tier_backend *b, uint64_t bytes);

	/*
	 * zpool, ramdisk (NULL elsewhere): slots for capacity_bytes, rounded
	 * down to pages, where that is more than they have, as remount size=
	 * grows the mount.  Returns 0, or -ENOMEM (or -ENOSPC past
	 * BACKEND_GROW_MAX_RAM times RAM more) with what could be added
	 * added.  One call at a time.
	 */
	int (*grow)(struct tier_backend *b, uint64_t capacity_bytes);

	/* redis (a chain: its last tier's): its servers' stats, up to max; returns how many. */
	unsigned int (*get_nodes)(struct tier_backend *b, struct backend_node_stats *out,
				  unsigned int max);

	/* A chain: whether slot, stored, now lies in a tier whose loads wait for no I/O. */
	bool (*is_slot_sync)(struct tier_backend *b, uint64_t slot);
};

struct tier_backend {
	const struct tier_backend_ops *ops;
};

/*
 * The chain: a RAM tier (zpool, ramdisk) in front of the file backend, as
 * zswap is in front of swap.  Not in backend_table: backend= names it by its
 * tiers.  chain_new() takes ownership of both tiers (destroyed with the chain,
 * or on failure) and runs the writeback thread; the tests give it wrapped ones.
 *
 * chain_new_spill() makes the other kind, with no bound and no writeback:
 * the upper tier (redis) takes what it can and the lower (the file) what it
 * refuses or fails to store.  A chain's lower tier may be one of those, which
 * makes three: zpool+redis://...+file:PATH.
 */
extern const struct tier_backend_ops tier_backend_chain;
int chain_new(struct tier_backend *upper, struct tier_backend *lower, uint64_t pool_max_bytes,
	      struct tier_backend **out);
int chain_new_spill(struct tier_backend *upper, struct tier_backend *lower,
		    struct tier_backend **out);

/*
 * A chain's tier i (0 the upper tier, 1 the lower), for a test to wrap before
 * the first store: the writeback thread starts with that store.
 */
struct tier_backend **chain_tier(struct tier_backend *chain, unsigned int i);

/* NULL-terminated list of the compiled-in backends. */
extern const struct tier_backend_ops *const backend_table[];

/* Their names in table order, space-separated: "zpool ramdisk file". */
extern const char backend_names[];

/*
 * The backends this build knows of but left out, each with why, e.g.
 * { "file", "liburing missing" }; ends with { NULL, NULL }.
 */
extern const char *const backend_left_out[][2];

/* The backend named name, or NULL. */
const struct tier_backend_ops *backend_find(const char *name);

/*
 * Why the backend of "NAME" or "NAME:ARG" (file:PATH) is left out of this
 * build, or NULL.
 */
const char *backend_why_left_out(const char *spec);

#endif
