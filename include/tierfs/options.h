/* SPDX-License-Identifier: MIT */
/*
 * Command line and mount options.  Everything is validated here, before
 * anything is mounted, and a bad option is reported by name.
 */
#ifndef TIERFS_OPTIONS_H
#define TIERFS_OPTIONS_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "tierfs/log.h"
#include "tierfs/mpol.h"
#include "tierfs/readahead.h"

struct codec;
struct tier_backend_ops;

enum cache_mode {
	CACHE_AUTO,   /* kernel page cache, except O_DIRECT opens */
	CACHE_ALWAYS, /* kernel page cache for every open */
	CACHE_NEVER,  /* direct I/O: every read and write reaches tierfs */
};

enum transport_mode {
	TRANSPORT_AUTO,	   /* what measured faster: see transport_pick */
	TRANSPORT_URING,   /* FUSE over io_uring, classic where the kernel lacks it */
	TRANSPORT_CLASSIC, /* read(2)/writev(2) on /dev/fuse */
};

/* When a read or a readdir updates atime: the mount's atime flags. */
enum atime_mode {
	ATIME_RELATIME, /* once after a change, or daily: the kernel's default */
	ATIME_STRICT,	/* strictatime: every access */
	ATIME_NONE,	/* noatime */
};

struct tierfs_options {
	uint64_t size;	    /* bytes of file data; 0 = unlimited */
	uint64_t nr_inodes; /* 0 = unlimited */
	mode_t mode;	    /* of the root directory */
	uid_t uid;
	gid_t gid;
	enum cache_mode cache;
	enum transport_mode transport;
	enum atime_mode atime;
	bool is_nodiratime;	   /* nodiratime: readdir leaves a directory's atime */
	unsigned int ring_poll_us; /* ring_poll=: the ring's threads poll this long; 0 off */
	bool is_ring_poll_given;   /* ring_poll= was given: refused with transport=classic */
	uint64_t mem;		   /* resident budget, bytes; 0 = from the machine */
	uint64_t memlimit;	   /* footprint limit, bytes; 0 = none */
	const struct tier_backend_ops *backend; /* NULL: backend=none */
	const struct tier_backend_ops *upper;	/* a chain's RAM tier: backend=zpool+file:PATH */
	const struct tier_backend_ops *lower;	/* file or redis, alone or a chain's last tier */
	char swap_path[PATH_MAX];      /* what follows lower's "NAME:": PATH, //HOST:PORT */
	char spill_path[PATH_MAX];     /* redis://...+file:PATH: the file after redis, or "" */
	unsigned int redis_timeout_ms; /* redis_timeout=; 0: the backend's default */
	unsigned int redis_ttl_s;      /* redis_ttl=; 0: keys never expire */
	unsigned int redis_wait;       /* redis_wait=: replicas a store waits for */
	char redis_auth[PATH_MAX];     /* redis_auth=FILE, or "" */
	uint64_t pool_max_bytes;       /* pool_max=SIZE: a chain's RAM tier bound */
	unsigned int pool_max_pct;     /* pool_max=N%: of the memory limit */
	bool is_pool_max_pct;	       /* which of the two pool_max= gave */
	bool is_encrypted;	       /* encrypt=: the file backend seals its slots */
	const struct codec *codec;     /* compressor= for zpool */
	int codec_level;
	bool is_backend_given;		 /* backend= was given: noswap refuses it */
	bool is_noswap;			 /* tmpfs's noswap: backend=none */
	bool is_inode32;		 /* inode32: st_ino wraps at 2^32, as tmpfs's */
	bool has_mpol;			 /* mpol= was given: */
	struct mpol mpol;		 /* the policy of the daemon's memory */
	uint64_t swapsize;		 /* backend capacity, bytes; 0 = default */
	enum readahead_policy readahead; /* swap-in readahead; 0 = auto */
	unsigned int cg_share;		 /* % of a tenant cgroup's limit; 0 = default */
	enum log_target log_target;	 /* log=; LOG_TARGET_DEFAULT when not given */
	char log_path[PATH_MAX];	 /* log=FILE */
	bool foreground;
	bool debug;
	bool allow_other;
	bool single_thread; /* serve requests on one thread */
	bool is_remount;    /* -o remount: change the running mount instead */
	const char *source; /* "tierfs" unless mount(8) names one */
	const char *mountpoint;
	char config_mountpoint[PATH_MAX]; /* --config's mountpoint=, if no argument names one */
	char kernel_opts[1024];		  /* comma list handed to libfuse/mount(2) */
};

/* The suffixes of every size and count, powers of 1024, for messages. */
#define OPTIONS_SUFFIXES "k/m/g/t/p/e"

/* What a size and a count look like, for messages (arguments, not formats). */
#define OPTIONS_SIZE_FORM "bytes with a " OPTIONS_SUFFIXES " suffix or N% of RAM"
#define OPTIONS_COUNT_FORM \
	"a count with a " OPTIONS_SUFFIXES " suffix or N% of RAM pages up to 100%"

/*
 * Parse a size: a number with an optional k/m/g/t/p/e suffix (powers of
 * 1024, either case), or N% of whole, N above 100 too.  Returns 0 or
 * -EINVAL (also for overflow).
 */
int options_parse_size(const char *s, uint64_t whole, uint64_t *out);

/* pool_max='s default: a share of the memory limit, as zswap's max_pool_percent. */
#define OPTIONS_POOL_MAX_PCT 25
#define OPTIONS_REDIS_TTL_S 86400 /* redis_ttl=: a day */
#define OPTIONS_RING_POLL_US 50	  /* ring_poll= */
#define OPTIONS_RING_POLL_MAX_US 10000

/*
 * Parse pool_max=: a size (into *bytes, *is_pct false) or N% of the memory
 * limit, 0-100 (into *pct, *is_pct true).  Returns 0 or -EINVAL.
 */
int options_parse_pool_max(const char *s, uint64_t *bytes, unsigned int *pct, bool *is_pct);

/*
 * backend= as the user names it, into buf: "zpool", "file", "zpool+file",
 * "zpool+redis+file", "none".
 */
const char *options_backend_name(const struct tierfs_options *o, char *buf, size_t size);

/* backend= whole, with its path or seeds: "zpool+redis://HOST:PORT+file:PATH". */
const char *options_backend_spec(const struct tierfs_options *o, char *buf, size_t size);

/* The smallest mem=, a tenant's too: one page (memlimit='s is BUDGET_MIN_LIMIT). */
#define OPTIONS_MIN_MEM 4096ULL

/*
 * Parse the value of size=, nr_inodes=, mem= or memlimit= (key), the one
 * check of mount, remount and tierctl set: a size as above with N% of ram
 * (nr_inodes=: a count, N% of ram's pages up to 100%); mem= at least
 * OPTIONS_MIN_MEM, memlimit= at least BUDGET_MIN_LIMIT or 0 (none, which
 * the caller may refuse).  0 is unlimited for size= and nr_inodes=.
 * Returns 0, 1 when mem= or memlimit= is more than ram (taken; msg holds a
 * warning), or -EINVAL with a reason in msg that names key and val.
 */
int options_parse_amount(const char *key, const char *val, uint64_t ram, uint64_t *out, char *msg,
			 size_t msg_len);

/* bytes with the largest suffix that divides them: "4k", "32m", "4097". */
void options_format_size(uint64_t bytes, char *buf, size_t len);

/*
 * Fill o from argv.  ram is the machine's memory in bytes (the base of the
 * defaults and of %).  Returns 0 with warnings in err (one a line, each
 * ending in a newline; empty without), 1 when --help/--version was handled
 * and the caller should exit 0, or -EINVAL with a message in err naming
 * the offending option.
 */
int options_parse(int argc, char **argv, uint64_t ram, struct tierfs_options *o, char *err,
		  size_t err_len);

/*
 * Join the -o lists of argv with commas into out: what a remount sends to
 * the running daemon.  Returns 0 or -E2BIG.
 */
int options_join_lists(int argc, char **argv, char *out, size_t len);

/*
 * The daemon's side of a remount: list is every option mount(8) passed
 * (the flags in force, FUSE's own, fstab's and the new ones); cur the
 * options the mount runs with.  The values of size=, nr_inodes=, mem=,
 * memlimit= and readahead= that differ from cur go to set as "KEY=VALUE"
 * pairs, space-separated, as given (for tierctl set's checks); any other
 * tierfs option must repeat its value in force.  *atime and *is_nodiratime
 * are what the atime flags make of cur's.  Returns 0, or -EINVAL with err
 * naming the option that is wrong or cannot change.
 */
int options_remount(const struct tierfs_options *cur, const char *list, uint64_t ram, char *set,
		    size_t set_len, enum atime_mode *atime, bool *is_nodiratime, char *err,
		    size_t err_len);

/*
 * The mount(2) flags of a remount: st_flags (statvfs's f_flag of the mount)
 * with o's kernel flags (ro, nosuid, noatime, ...) applied over them.
 * *is_changed says whether they differ from st_flags.
 */
unsigned long options_remount_flags(const struct tierfs_options *o, unsigned long st_flags,
				    bool *is_changed);

/* "auto", "uring" or "classic". */
const char *options_transport_name(enum transport_mode mode);

/* "auto", "always" or "never". */
const char *options_cache_name(enum cache_mode mode);

extern const char options_usage[];

#endif
