// SPDX-License-Identifier: MIT
/*
 * The redis backend: swapped pages in other machines' memory, through a
 * plain Redis or a Redis Cluster (backend=redis://HOST:PORT[,HOST:PORT...]).
 *
 * A page is compressed with the mount's codec and sealed with a key of the
 * backend's own (seal.h) before it leaves, so the store sees neither the
 * data nor which slot it belongs to.  Slots are grouped 256 to a key, a
 * hash "tfs:{ID:BUCKET}" whose fields are the slots, so that a batch of
 * neighbouring slots is a pipeline to one node and the mount's keys are few
 * enough to carry a time to live: every key gets redis_ttl= when written,
 * re-armed every third of it (a minute at most) while the mount lives, so
 * the keys of a mount that died without unmounting expire; unmount deletes
 * them all, within one redis_timeout= (a node down keeps its own until they
 * expire).  The time to live protects the server's memory; its cost is
 * that a daemon that re-arms nothing for that long (stopped, the machine
 * asleep, cut off from a node) loses its pages there, hence a default of a
 * day, and a line in the log when such a daemon goes on.  A field is named
 * by its slot and the slot's generation, bumped each time the slot is
 * handed out.
 *
 * Two threads of the backend do what no caller should wait for: the
 * flusher deletes the fields of freed slots (a free only queues the slot,
 * under whatever locks its caller holds), the rearmer re-arms the time to
 * live, and a node that does not answer holds up neither the other thread
 * nor, in the rearmer, the other nodes.
 *
 * hiredis speaks the protocol; the cluster part is ours.  The slot map comes
 * from CLUSTER SLOTS of any node that answers (a server with cluster support
 * disabled is a plain Redis: one node for everything).  Each batch is split
 * by node, pipelined to every node at once, and what comes back MOVED, ASK,
 * TRYAGAIN, CLUSTERDOWN or on a broken connection is sent again, after a
 * refresh of the map where that is what it means, until redis_timeout=
 * runs out.  Every command used (HSET, HGET, HDEL, PEXPIRE, UNLINK) may be
 * sent twice without harm, the copy on a broken connection landing late
 * included: an HSET or HDEL of a slot's earlier use names a field that no
 * load asks for again.  A store that is not done in time fails and the
 * page stays in the tier above; a load that is not is -EIO for that read.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <hiredis/hiredis.h>
#include <sodium.h>

#include "tierfs/backend.h"
#include "tierfs/clock.h"
#include "tierfs/codec.h"
#include "tierfs/log.h"
#include "tierfs/seal.h"

extern const struct tier_backend_ops tier_backend_redis;

#define REDIS_BUCKET_SHIFT 8 /* slots a key (hash) holds: 256, 1 MiB of pages */
#define REDIS_BUCKET_SLOTS (1u << REDIS_BUCKET_SHIFT)
#define REDIS_HASH_SLOTS 16384
#define REDIS_MAX_NODES BACKEND_MAX_NODES
#define REDIS_CONNS 4	      /* connections to a node, one per thread at a time */
#define REDIS_WORKERS 4	      /* codec contexts and buffers */
#define REDIS_FREE_BATCH 1024 /* a thread's run: deletes, re-arms or unlinks */
#define REDIS_CHUNK 4096      /* commands in one run at most */
#define REDIS_LAT_BUCKETS 32  /* round-trip latency histogram, log2 of µs */
#define REDIS_DEFAULT_TIMEOUT_MS 5000

enum redis_kind { REDIS_SET, REDIS_GET, REDIS_HDEL, REDIS_EXPIRE, REDIS_UNLINK, REDIS_WAIT };

/* One command of a run: on slot's key, or on bucket's (EXPIRE, UNLINK). */
struct redis_cmd {
	enum redis_kind kind;
	uint64_t slot;	   /* SET, GET, HDEL; for EXPIRE, UNLINK: the bucket */
	const void *val;   /* SET */
	size_t val_len;	   /* SET */
	int res;	   /* 1 to send, 0 done, -errno */
	int node;	   /* where it goes this round */
	int ask_node;	   /* -1, or where an ASK redirect sent it */
	redisReply *reply; /* GET: the value, the caller's to free */
};

struct redis_conn {
	pthread_mutex_t lock;
	redisContext *c; /* NULL: not connected */
};

struct redis_node {
	char host[256];
	int port;
	atomic_bool is_down; /* no connection, or no answer in time, since it last answered */
	struct redis_conn conns[REDIS_CONNS];
	atomic_uint_fast64_t nr_round_trips, nr_commands, nr_redirects, nr_errors;
	atomic_uint_fast64_t nr_failovers; /* its slots given to another while it was down */
	atomic_uint_fast64_t lat[REDIS_LAT_BUCKETS];
};

/* A codec context and a buffer for one store or load at a time. */
struct redis_worker {
	pthread_mutex_t lock;
	struct codec_ctx *ctx;
	unsigned char *buf;
	size_t buf_len;
	struct redis_cmd *cmds;
	size_t cmds_cap;
};

/*
 * Locking, in this order: a worker's lock, refresh_lock, a connection's lock
 * (a round takes them in node order), map_lock, alloc_lock; thread_lock is
 * taken alone.  The first three are held over round trips, map_lock and
 * alloc_lock never.  A free takes alloc_lock and thread_lock only: its
 * callers hold the file's or reclaim's locks.
 */
struct redis_backend {
	struct tier_backend base;
	char id[17]; /* the mount's, in its keys */
	const struct codec *codec;
	int codec_level;
	struct seal_key *key; /* NULL: encrypt=off */
	unsigned int timeout_ms, ttl_ms, nr_wait;
	char *user, *password; /* redis_auth= */
	bool is_cluster;

	/* The topology: nodes are added, never removed (their slots move). */
	pthread_rwlock_t map_lock;
	struct redis_node *nodes[REDIS_MAX_NODES];
	atomic_uint nr_nodes;
	uint8_t slot_node[REDIS_HASH_SLOTS]; /* master of each hash slot */
	pthread_mutex_t refresh_lock;
	uint64_t refreshed_ns;

	/* Slots; alloc_lock protects all but nonces, lens and gens, the owner's. */
	uint64_t nr_slots;
	uint64_t *nonces;	/* of each slot's seal */
	uint16_t *lens;		/* each slot's value before sealing; 0: not stored */
	uint32_t *gens;		/* each slot's generation, in its field's name */
	uint16_t *bucket_hash;	/* each bucket's hash slot */
	uint16_t *bucket_pages; /* stored in each bucket */
	uint32_t *bucket_bytes; /* their values' bytes */
	pthread_mutex_t alloc_lock;
	pthread_cond_t flushed; /* with alloc_lock: a flush gave its slots back */
	uint32_t *free_stack;	/* slots free to reuse */
	uint64_t nr_free;
	uint64_t cursor;  /* slots below were handed out at some time */
	uint64_t nr_used; /* stored, not freed */
	uint64_t value_bytes;
	/*
	 * Freed slots whose fields are still to be deleted, oldest first: a ring
	 * with room for every slot, so that a free neither waits nor fails.  A
	 * slot goes on to the free stack once its delete is acknowledged.
	 */
	uint32_t *pending;
	uint64_t pending_head, nr_pending;
	uint64_t nr_flushing; /* taken from pending by flushes under way */
	struct redis_worker workers[REDIS_WORKERS];

	/*
	 * Two threads: the flusher deletes the fields of freed slots, the
	 * rearmer re-arms the keys' time to live, so that neither waits for a
	 * node the other is stuck on.  thread_lock protects the flags; each
	 * thread's commands and times are its own.
	 */
	pthread_t flusher, rearmer;
	pthread_mutex_t thread_lock;
	pthread_cond_t flush_cond; /* stop, or frees to delete */
	pthread_cond_t rearm_cond; /* stop */
	atomic_bool is_stopping;
	bool is_started, has_flusher, has_rearmer, is_flush_wanted;
	uint64_t probed_ns; /* when deletes last went to nodes that were down */
	struct redis_cmd flush_cmds[REDIS_FREE_BATCH];
	struct redis_cmd rearm_cmds[REDIS_FREE_BATCH];

	atomic_uint_fast64_t nr_stores, nr_loads, nr_frees, nr_store_errors, nr_load_errors;
	atomic_uint_fast64_t nr_reject_full, nr_reject_alloc, nr_decrypt_errors;
	struct log_ratelimit rl_load, rl_store;
};

static struct redis_backend *to_redis(struct tier_backend *tb)
{
	return (struct redis_backend *)tb;
}

/* ---- keys ---- */

/* Redis Cluster's key hash: CRC-16/XMODEM. */
static uint16_t redis_crc16(const char *s, size_t len)
{
	uint16_t crc = 0;

	for (size_t i = 0; i < len; i++) {
		crc ^= (uint16_t)((unsigned char)s[i] << 8);
		for (int k = 0; k < 8; k++)
			crc = crc & 0x8000 ? (uint16_t)(crc << 1) ^ 0x1021 : (uint16_t)(crc << 1);
	}
	return crc;
}

/* bucket's key, "tfs:{ID:BUCKET}", into buf (48 bytes); returns its length. */
static int redis_key(const struct redis_backend *b, uint64_t bucket, char *buf)
{
	return snprintf(buf, 48, "tfs:{%s:%llx}", b->id, (unsigned long long)bucket);
}

static uint16_t redis_key_hash(const struct redis_backend *b, uint64_t bucket)
{
	char key[48];
	int len = redis_key(b, bucket, key);

	/* The hash tag: what is between the braces. */
	return redis_crc16(key + 5, (size_t)len - 6) & (REDIS_HASH_SLOTS - 1);
}

static uint64_t redis_cmd_bucket(const struct redis_cmd *cmd)
{
	return cmd->kind == REDIS_EXPIRE || cmd->kind == REDIS_UNLINK ?
		       cmd->slot :
		       cmd->slot >> REDIS_BUCKET_SHIFT;
}

/* ---- nodes and connections ---- */

/* The node at host:port, added if new.  Returns its index or -ENOSPC.  map_lock held for writing. */
static int redis_node_get(struct redis_backend *b, const char *host, int port)
{
	unsigned int n = atomic_load(&b->nr_nodes);
	struct redis_node *node;

	for (unsigned int i = 0; i < n; i++)
		if (b->nodes[i]->port == port && !strcmp(b->nodes[i]->host, host))
			return (int)i;
	if (n == REDIS_MAX_NODES || strlen(host) >= sizeof(node->host))
		return -ENOSPC;
	node = calloc(1, sizeof(*node));
	if (!node)
		return -ENOMEM;
	snprintf(node->host, sizeof(node->host), "%s", host);
	node->port = port;
	for (int i = 0; i < REDIS_CONNS; i++)
		pthread_mutex_init(&node->conns[i].lock, NULL);
	b->nodes[n] = node;
	atomic_store(&b->nr_nodes, n + 1);
	return (int)n;
}

/*
 * What an exchange with node said, logged when it changes.  Only an answer
 * brings a node back: a hung server's kernel still accepts connections.
 */
static void redis_node_answered(struct redis_node *node)
{
	if (atomic_exchange(&node->is_down, false))
		log_msg(LOG_INFO, "backend=redis: %s:%d: answers again", node->host, node->port);
}

static void redis_node_lost(struct redis_node *node, const char *why)
{
	atomic_fetch_add(&node->nr_errors, 1);
	if (!atomic_exchange(&node->is_down, true))
		log_msg(LOG_WARNING, "backend=redis: %s:%d: %s", node->host, node->port, why);
}

/* Connect c's slot to node, with AUTH.  Returns 0 or -EIO. */
static int redis_connect(struct redis_backend *b, struct redis_node *node, struct redis_conn *rc)
{
	struct timeval tv = { b->timeout_ms / 1000, (b->timeout_ms % 1000) * 1000 };
	redisContext *c = redisConnectWithTimeout(node->host, node->port, tv);
	redisReply *r = NULL;

	if (!c || c->err) {
		char why[160];

		snprintf(why, sizeof(why), "cannot connect: %s", c ? c->errstr : "out of memory");
		redis_node_lost(node, why);
		goto fail;
	}
	if (redisSetTimeout(c, tv) != REDIS_OK) {
		redis_node_lost(node, "cannot set a timeout");
		goto fail;
	}
	redisEnableKeepAlive(c);
	if (b->password) {
		r = b->user ? redisCommand(c, "AUTH %s %s", b->user, b->password) :
			      redisCommand(c, "AUTH %s", b->password);
		if (!r) {
			redis_node_lost(node, c->errstr);
			goto fail;
		}
		if (r->type == REDIS_REPLY_ERROR) {
			log_msg(LOG_ERR, "backend=redis: %s:%d: AUTH refused: %s", node->host,
				node->port, r->str);
			redis_node_lost(node, "AUTH refused");
			goto fail;
		}
		freeReplyObject(r);
		redis_node_answered(node);
	}
	rc->c = c;
	return 0;

fail:
	if (r)
		freeReplyObject(r);
	if (c)
		redisFree(c);
	return -EIO;
}

/* Take one of node's connections: a free one if there is, else wait for the thread's. */
static struct redis_conn *redis_conn_take(struct redis_node *node)
{
	static _Thread_local unsigned int pick;
	struct redis_conn *rc;

	if (!pick)
		pick = (unsigned int)(uintptr_t)&pick >> 6 | 1;
	for (int i = 0; i < REDIS_CONNS; i++) {
		rc = &node->conns[(pick + (unsigned int)i) % REDIS_CONNS];
		if (!pthread_mutex_trylock(&rc->lock))
			return rc;
	}
	rc = &node->conns[pick % REDIS_CONNS];
	pthread_mutex_lock(&rc->lock);
	return rc;
}

static void redis_conn_drop(struct redis_conn *rc)
{
	if (rc->c)
		redisFree(rc->c);
	rc->c = NULL;
}

/* ---- the slot map ---- */

static bool redis_parse_addr(const char *s, size_t len, char *host, size_t host_len, int *port)
{
	const char *colon = memrchr(s, ':', len);
	const char *h = s;
	size_t hl;
	char *end;
	long p;

	if (!colon)
		return false;
	hl = (size_t)(colon - s);
	if (hl >= 2 && h[0] == '[' && h[hl - 1] == ']') {
		h++;
		hl -= 2;
	}
	if (!hl || hl >= host_len)
		return false;
	memcpy(host, h, hl);
	host[hl] = '\0';
	p = strtol(colon + 1, &end, 10);
	if (end != s + len || end == colon + 1 || p < 1 || p > 65535)
		return false;
	*port = (int)p;
	return true;
}

/*
 * Ask node i for the slot map and install it.  Returns 0, 1 when the server
 * is a plain Redis (map untouched), or -EIO.
 */
static int redis_map_from(struct redis_backend *b, unsigned int i)
{
	struct redis_conn *rc = redis_conn_take(b->nodes[i]);
	uint8_t map[REDIS_HASH_SLOTS];
	redisReply *r;
	int ret = -EIO;

	if (!rc->c && redis_connect(b, b->nodes[i], rc))
		goto out;
	r = redisCommand(rc->c, "CLUSTER SLOTS");
	if (!r) {
		redis_node_lost(b->nodes[i], rc->c->errstr[0] ? rc->c->errstr : "connection lost");
		redis_conn_drop(rc);
		goto out;
	}
	redis_node_answered(b->nodes[i]);
	pthread_mutex_unlock(&rc->lock);
	rc = NULL;
	pthread_rwlock_wrlock(&b->map_lock);
	if (r->type == REDIS_REPLY_ERROR && !strncmp(r->str, "NOAUTH", 6))
		log_msg(LOG_ERR, "backend=redis: %s:%d wants a password: give it in redis_auth=",
			b->nodes[i]->host, b->nodes[i]->port);
	if (r->type == REDIS_REPLY_ERROR) {
		/* A plain server: it has every key. */
		ret = strstr(r->str, "cluster support disabled") && !b->is_cluster ? 1 : -EIO;
		if (ret == 1)
			memset(b->slot_node, (int)i, sizeof(b->slot_node));
		pthread_rwlock_unlock(&b->map_lock);
		freeReplyObject(r);
		return ret;
	}
	memcpy(map, b->slot_node, sizeof(map));
	ret = r->type == REDIS_REPLY_ARRAY && r->elements ? 0 : -EIO;
	for (size_t e = 0; !ret && e < r->elements; e++) {
		redisReply *range = r->element[e], *master;
		long long from, to;
		int node;

		if (range->type != REDIS_REPLY_ARRAY || range->elements < 3 ||
		    range->element[2]->type != REDIS_REPLY_ARRAY ||
		    range->element[2]->elements < 2) {
			ret = -EIO;
			break;
		}
		master = range->element[2];
		from = range->element[0]->integer;
		to = range->element[1]->integer;
		if (master->element[0]->type != REDIS_REPLY_STRING || from < 0 || to < from ||
		    to >= REDIS_HASH_SLOTS) {
			ret = -EIO;
			break;
		}
		/* An empty host: the node we asked. */
		node = redis_node_get(
			b, master->element[0]->len ? master->element[0]->str : b->nodes[i]->host,
			(int)master->element[1]->integer);
		if (node < 0) {
			ret = node;
			break;
		}
		for (long long s = from; s <= to; s++)
			map[s] = (uint8_t)node;
	}
	if (!ret) {
		/* A node down whose slots another now serves: a failover, counted once. */
		bool has_lost[REDIS_MAX_NODES] = { false };

		for (unsigned int s = 0; b->is_cluster && s < REDIS_HASH_SLOTS; s++)
			if (map[s] != b->slot_node[s] && b->nodes[b->slot_node[s]]->is_down)
				has_lost[b->slot_node[s]] = true;
		for (unsigned int n = 0; n < REDIS_MAX_NODES; n++)
			if (has_lost[n]) {
				atomic_fetch_add(&b->nodes[n]->nr_failovers, 1);
				log_msg(LOG_WARNING,
					"backend=redis: %s:%d down, its slots failed over",
					b->nodes[n]->host, b->nodes[n]->port);
			}
		/* A slot no master serves (the cluster is reconfiguring) keeps its old node. */
		memcpy(b->slot_node, map, sizeof(map));
		b->is_cluster = true;
	}
	pthread_rwlock_unlock(&b->map_lock);
	freeReplyObject(r);
out:
	if (rc)
		pthread_mutex_unlock(&rc->lock);
	return ret;
}

/*
 * Refresh the slot map from the first node that answers, those that are up
 * asked first, at most every 50 ms however many threads ask.  Returns 0,
 * or -EIO when none did.
 */
static int redis_refresh(struct redis_backend *b, bool is_forced)
{
	uint64_t now = clock_now_ns();
	bool was_down[REDIS_MAX_NODES];
	unsigned int nr_nodes;
	int ret = -EIO;

	pthread_mutex_lock(&b->refresh_lock);
	if (!is_forced && now - b->refreshed_ns < 50000000) {
		pthread_mutex_unlock(&b->refresh_lock);
		return 0;
	}
	nr_nodes = atomic_load(&b->nr_nodes);
	for (unsigned int i = 0; i < nr_nodes; i++)
		was_down[i] = b->nodes[i]->is_down;
	for (int is_down = 0; is_down < 2; is_down++)
		for (unsigned int i = 0; i < nr_nodes && ret < 0; i++)
			if (was_down[i] == is_down)
				ret = redis_map_from(b, i) < 0 ? -EIO : 0;
	b->refreshed_ns = clock_now_ns();
	pthread_mutex_unlock(&b->refresh_lock);
	return ret;
}

/* ---- running commands ---- */

static void redis_lat_add(struct redis_node *node, uint64_t ns)
{
	uint64_t us = ns / 1000;
	unsigned int i = 0;

	while (us > 1 && i < REDIS_LAT_BUCKETS - 1) {
		us >>= 1;
		i++;
	}
	atomic_fetch_add_explicit(&node->lat[i], 1, memory_order_relaxed);
}

/* What an error reply means for the command: retry (1, 2: refresh first) or -errno. */
static int redis_classify(struct redis_backend *b, struct redis_cmd *cmd, const redisReply *r)
{
	const char *s = r->str;

	if (!strncmp(s, "MOVED ", 6) || !strncmp(s, "ASK ", 4)) {
		bool is_ask = s[1] == 'S';
		const char *addr = strchr(s + (is_ask ? 4 : 6), ' ');
		char host[256];
		int port, node;
		long hs = strtol(s + (is_ask ? 4 : 6), NULL, 10);

		if (!addr ||
		    !redis_parse_addr(addr + 1, strlen(addr + 1), host, sizeof(host), &port))
			return -EIO;
		pthread_rwlock_wrlock(&b->map_lock);
		node = redis_node_get(b, host, port);
		if (node >= 0 && !is_ask && hs >= 0 && hs < REDIS_HASH_SLOTS)
			b->slot_node[hs] = (uint8_t)node;
		pthread_rwlock_unlock(&b->map_lock);
		if (node < 0)
			return -EIO;
		cmd->ask_node = is_ask ? node : -1;
		return is_ask ? 1 : 2;
	}
	if (!strncmp(s, "OOM", 3))
		return -ENOSPC;
	if (!strncmp(s, "TRYAGAIN", 8) || !strncmp(s, "LOADING", 7) ||
	    !strncmp(s, "MASTERDOWN", 10))
		return 1;
	if (!strncmp(s, "CLUSTERDOWN", 11) || !strncmp(s, "READONLY", 8))
		return 2;
	return -EIO;
}

/*
 * The field of slot in its bucket's hash: the slot's place in the bucket and
 * its generation, so that a command that lands late (sent again on a
 * connection that broke) only ever touches the field of the slot's earlier
 * use, which no load asks for.  Into buf (5 bytes); returns its length.
 */
static size_t redis_field(const struct redis_backend *b, uint64_t slot, char *buf)
{
	uint32_t gen = b->gens[slot];

	buf[0] = (char)(slot & (REDIS_BUCKET_SLOTS - 1));
	for (int i = 0; i < 4; i++)
		buf[1 + i] = (char)(gen >> (8 * i));
	return 5;
}

static void redis_append(struct redis_backend *b, redisContext *c, const struct redis_cmd *cmd)
{
	char key[48], field[8], ms[24];
	const char *argv[4];
	size_t argvlen[4];
	int argc = 2;

	argvlen[1] = (size_t)redis_key(b, redis_cmd_bucket(cmd), key);
	argv[1] = key;
	switch (cmd->kind) {
	case REDIS_SET:
		argv[0] = "HSET", argvlen[0] = 4;
		argv[2] = field, argvlen[2] = redis_field(b, cmd->slot, field);
		argv[3] = cmd->val, argvlen[3] = cmd->val_len;
		argc = 4;
		break;
	case REDIS_GET:
	case REDIS_HDEL:
		argv[0] = cmd->kind == REDIS_GET ? "HGET" : "HDEL", argvlen[0] = 4;
		argv[2] = field, argvlen[2] = redis_field(b, cmd->slot, field);
		argc = 3;
		break;
	case REDIS_EXPIRE:
		argv[0] = "PEXPIRE", argvlen[0] = 7;
		argvlen[2] = (size_t)snprintf(ms, sizeof(ms), "%u", b->ttl_ms);
		argv[2] = ms;
		argc = 3;
		break;
	case REDIS_UNLINK:
		argv[0] = "UNLINK", argvlen[0] = 6;
		break;
	case REDIS_WAIT:
		break;
	}
	redisAppendCommandArgv(c, argc, argv, argvlen);
}

/* Whether r is what cmd expects when it worked. */
static bool redis_reply_ok(const struct redis_cmd *cmd, const redisReply *r)
{
	if (cmd->kind == REDIS_GET)
		return r->type == REDIS_REPLY_STRING;
	return r->type == REDIS_REPLY_INTEGER;
}

/*
 * One round: send every command still to send, pipelined to all their nodes
 * at once, and read the answers.  Returns 0, 1 when some are to be sent
 * again, 2 when the map should be refreshed first.
 */
static int redis_round(struct redis_backend *b, struct redis_cmd *cmds, unsigned int nr)
{
	struct redis_conn *conn[REDIS_MAX_NODES] = { NULL };
	unsigned int nr_sent[REDIS_MAX_NODES] = { 0 }, nr_nodes = atomic_load(&b->nr_nodes);
	bool has_write[REDIS_MAX_NODES] = { false };
	uint64_t t0[REDIS_MAX_NODES];
	int again = 0;

	pthread_rwlock_rdlock(&b->map_lock);
	nr_nodes = atomic_load(&b->nr_nodes);
	for (unsigned int i = 0; i < nr; i++)
		if (cmds[i].res == 1)
			cmds[i].node =
				cmds[i].ask_node >= 0 ?
					cmds[i].ask_node :
					b->slot_node[b->bucket_hash[redis_cmd_bucket(&cmds[i])]];
	pthread_rwlock_unlock(&b->map_lock);

	/* Send: each node's commands in order, nodes in index order (the lock order). */
	for (unsigned int n = 0; n < nr_nodes; n++) {
		struct redis_node *node = b->nodes[n];
		int done = 0;

		for (unsigned int i = 0; i < nr; i++) {
			if (cmds[i].res != 1 || cmds[i].node != (int)n)
				continue;
			if (!conn[n]) {
				conn[n] = redis_conn_take(node);
				if (!conn[n]->c && redis_connect(b, node, conn[n])) {
					pthread_mutex_unlock(&conn[n]->lock);
					conn[n] = NULL;
					again = 2;
					break;
				}
			}
			if (cmds[i].ask_node >= 0)
				redisAppendCommand(conn[n]->c, "ASKING");
			redis_append(b, conn[n]->c, &cmds[i]);
			has_write[n] |= cmds[i].kind == REDIS_SET;
			nr_sent[n]++;
		}
		if (!conn[n])
			continue;
		if (has_write[n] && b->nr_wait)
			redisAppendCommand(conn[n]->c, "WAIT %u %u", b->nr_wait, b->timeout_ms / 2);
		t0[n] = clock_now_ns();
		while (!done)
			if (redisBufferWrite(conn[n]->c, &done) != REDIS_OK)
				break;
		atomic_fetch_add(&node->nr_round_trips, 1);
		atomic_fetch_add(&node->nr_commands, nr_sent[n]);
	}

	/* Receive, node by node. */
	for (unsigned int n = 0; n < nr_nodes; n++) {
		struct redis_node *node = b->nodes[n];
		bool is_broken = false;

		if (!conn[n])
			continue;
		for (unsigned int i = 0; i < nr; i++) {
			redisReply *r = NULL;
			int res;

			if (cmds[i].res != 1 || cmds[i].node != (int)n)
				continue;
			if (!is_broken && cmds[i].ask_node >= 0) {
				if (redisGetReply(conn[n]->c, (void **)&r) != REDIS_OK)
					is_broken = true;
				else
					freeReplyObject(r);
				r = NULL;
			}
			if (is_broken || redisGetReply(conn[n]->c, (void **)&r) != REDIS_OK) {
				/* Not known to be done: sent again on a new connection. */
				is_broken = true;
				again = 2;
				continue;
			}
			cmds[i].ask_node = -1;
			if (redis_reply_ok(&cmds[i], r)) {
				cmds[i].res = 0;
				if (cmds[i].kind == REDIS_GET) {
					cmds[i].reply = r;
					continue;
				}
			} else if (r->type == REDIS_REPLY_NIL) {
				cmds[i].res = -ENOENT; /* a GET of a field that is not there */
			} else if (r->type == REDIS_REPLY_ERROR) {
				res = redis_classify(b, &cmds[i], r);
				if (res > 0) {
					atomic_fetch_add(&node->nr_redirects,
							 res == 1 || r->str[0] == 'M');
					if (res > again)
						again = res;
				} else {
					atomic_fetch_add(&node->nr_errors, 1);
					cmds[i].res = res;
				}
			} else {
				cmds[i].res = -EIO;
			}
			freeReplyObject(r);
		}
		if (!is_broken && has_write[n] && b->nr_wait) {
			redisReply *r = NULL;

			if (redisGetReply(conn[n]->c, (void **)&r) != REDIS_OK) {
				is_broken = true;
			} else if (r->type != REDIS_REPLY_INTEGER ||
				   r->integer < (long long)b->nr_wait) {
				/* Too few replicas have them: those stores failed. */
				atomic_fetch_add(&node->nr_errors, 1);
				for (unsigned int i = 0; i < nr; i++)
					if (cmds[i].node == (int)n && cmds[i].kind == REDIS_SET &&
					    !cmds[i].res)
						cmds[i].res = -EIO;
			}
			if (r)
				freeReplyObject(r);
		}
		if (is_broken) {
			redis_node_lost(node, conn[n]->c->errstr[0] ? conn[n]->c->errstr :
								      "connection lost");
			redis_conn_drop(conn[n]);
		} else {
			redis_node_answered(node);
			redis_lat_add(node, clock_now_ns() - t0[n]);
		}
		pthread_mutex_unlock(&conn[n]->lock);
	}
	return again;
}

/*
 * Run nr commands until each is done or has failed, or deadline (of
 * clock_now_ns()) has passed: what is left then fails with -EIO.  One
 * round at least, however late.
 */
static void redis_run_until(struct redis_backend *b, struct redis_cmd *cmds, unsigned int nr,
			    uint64_t deadline)
{
	unsigned int backoff_us = 5000;

	for (unsigned int i = 0; i < nr; i++) {
		cmds[i].res = 1;
		cmds[i].ask_node = -1;
		cmds[i].reply = NULL;
	}
	for (;;) {
		int again = redis_round(b, cmds, nr);

		if (!again)
			return;
		if (clock_now_ns() >= deadline)
			break;
		if (again == 2) {
			/* A node lost or the cluster reconfiguring: wait a little, then ask. */
			struct timespec ts = { 0, (long)backoff_us * 1000 };

			nanosleep(&ts, NULL);
			if (backoff_us < 200000)
				backoff_us *= 2;
			redis_refresh(b, false);
		}
	}
	for (unsigned int i = 0; i < nr; i++)
		if (cmds[i].res == 1)
			cmds[i].res = -EIO;
}

/* redis_run_until() redis_timeout= from now. */
static void redis_run(struct redis_backend *b, struct redis_cmd *cmds, unsigned int nr)
{
	redis_run_until(b, cmds, nr, clock_now_ns() + (uint64_t)b->timeout_ms * 1000000);
}

/* ---- slots ---- */

static struct redis_worker *redis_worker_take(struct redis_backend *b)
{
	static _Thread_local unsigned int pick;

	for (int i = 0; i < REDIS_WORKERS; i++) {
		struct redis_worker *w = &b->workers[(pick + (unsigned int)i) % REDIS_WORKERS];

		if (!pthread_mutex_trylock(&w->lock))
			return w;
	}
	pick++;
	pthread_mutex_lock(&b->workers[pick % REDIS_WORKERS].lock);
	return &b->workers[pick % REDIS_WORKERS];
}

/* Room in w for nr_cmds commands and nr sealed values.  Returns 0 or -ENOMEM. */
static int redis_worker_reserve(struct redis_worker *w, unsigned int nr_cmds, unsigned int nr)
{
	size_t len = (size_t)(nr ? nr : 1) * (PAGE_SIZE + SEAL_TAG_BYTES);

	if (w->cmds_cap < nr_cmds) {
		struct redis_cmd *c = realloc(w->cmds, nr_cmds * sizeof(*c));

		if (!c)
			return -ENOMEM;
		w->cmds = c;
		w->cmds_cap = nr_cmds;
	}
	if (w->buf_len < len) {
		unsigned char *p = realloc(w->buf, len);

		if (!p)
			return -ENOMEM;
		w->buf = p;
		w->buf_len = len;
	}
	return 0;
}

/* Hand out up to nr slots, each in a new generation; alloc_lock held.  Returns how many. */
static unsigned int redis_alloc(struct redis_backend *b, uint64_t *slots, unsigned int nr)
{
	unsigned int n = 0;

	while (n < nr && b->nr_free)
		slots[n++] = b->free_stack[--b->nr_free];
	while (n < nr && b->cursor < b->nr_slots)
		slots[n++] = b->cursor++;
	for (unsigned int i = 0; i < n; i++)
		b->gens[slots[i]]++;
	return n;
}

static bool redis_has_pending(struct redis_backend *b)
{
	bool has;

	pthread_mutex_lock(&b->alloc_lock);
	has = b->nr_pending;
	pthread_mutex_unlock(&b->alloc_lock);
	return has;
}

/* Wait on cond, whose clock is CLOCK_MONOTONIC, until deadline_ns at the latest. */
static void redis_wait_until(pthread_cond_t *cond, pthread_mutex_t *lock, uint64_t deadline_ns)
{
	struct timespec ts = { (time_t)(deadline_ns / 1000000000),
			       (long)(deadline_ns % 1000000000) };

	pthread_cond_timedwait(cond, lock, &ts);
}

/* Put slot at pending's tail; alloc_lock held. */
static void redis_pending_add(struct redis_backend *b, uint32_t slot)
{
	b->pending[(b->pending_head + b->nr_pending++) % b->nr_slots] = slot;
}

/* Have the thread delete the pending frees' fields now rather than at its next tick. */
static void redis_kick(struct redis_backend *b)
{
	pthread_mutex_lock(&b->thread_lock);
	b->is_flush_wanted = true;
	pthread_cond_signal(&b->flush_cond);
	pthread_mutex_unlock(&b->thread_lock);
}

/*
 * Take up to max slots from pending's head and delete their fields: a slot
 * whose delete is acknowledged goes on to the free stack, any other back
 * to the tail, for a later try.  With skip_down, a slot whose key is on a
 * node that is down goes back unsent, as it would only wait out
 * redis_timeout=.  Returns how many slots were freed; *nr_taken, how many
 * were taken.
 */
static unsigned int redis_flush_batch(struct redis_backend *b, struct redis_cmd *cmds, uint64_t max,
				      bool skip_down, unsigned int *nr_taken)
{
	uint32_t batch[REDIS_FREE_BATCH], skipped[REDIS_FREE_BATCH];
	unsigned int nr, nr_sent = 0, nr_skipped = 0, nr_freed = 0;

	if (max > REDIS_FREE_BATCH)
		max = REDIS_FREE_BATCH;
	pthread_mutex_lock(&b->alloc_lock);
	nr = (unsigned int)(b->nr_pending < max ? b->nr_pending : max);
	for (unsigned int i = 0; i < nr; i++)
		batch[i] = b->pending[(b->pending_head + i) % b->nr_slots];
	b->pending_head = (b->pending_head + nr) % b->nr_slots;
	b->nr_pending -= nr;
	b->nr_flushing += nr;
	pthread_mutex_unlock(&b->alloc_lock);
	*nr_taken = nr;
	if (!nr)
		return 0;

	pthread_rwlock_rdlock(&b->map_lock);
	for (unsigned int i = 0; i < nr; i++) {
		uint64_t bucket = batch[i] >> REDIS_BUCKET_SHIFT;

		if (skip_down && b->nodes[b->slot_node[b->bucket_hash[bucket]]]->is_down)
			skipped[nr_skipped++] = batch[i];
		else
			cmds[nr_sent++] =
				(struct redis_cmd){ .kind = REDIS_HDEL, .slot = batch[i] };
	}
	pthread_rwlock_unlock(&b->map_lock);
	if (nr_sent)
		redis_run(b, cmds, nr_sent);

	pthread_mutex_lock(&b->alloc_lock);
	for (unsigned int i = 0; i < nr_sent; i++) {
		if (cmds[i].res) {
			redis_pending_add(b, (uint32_t)cmds[i].slot);
		} else {
			b->free_stack[b->nr_free++] = (uint32_t)cmds[i].slot;
			nr_freed++;
		}
	}
	for (unsigned int i = 0; i < nr_skipped; i++)
		redis_pending_add(b, skipped[i]);
	b->nr_flushing -= nr;
	pthread_cond_broadcast(&b->flushed);
	pthread_mutex_unlock(&b->alloc_lock);
	return nr_freed;
}

/*
 * The thread's round of deletes: each slot pending when it starts, once.
 * Those on a node that is down are sent at most once a second, to find
 * out whether it is back; in between they wait in pending.
 */
static void redis_flush_frees(struct redis_backend *b)
{
	uint64_t left, now = clock_now_ns();
	bool skip_down = now - b->probed_ns < 1000000000;

	if (!skip_down)
		b->probed_ns = now;
	pthread_mutex_lock(&b->alloc_lock);
	left = b->nr_pending;
	pthread_mutex_unlock(&b->alloc_lock);
	while (left && !atomic_load(&b->is_stopping)) {
		unsigned int taken;

		redis_flush_batch(b, b->flush_cmds, left, skip_down, &taken);
		if (!taken)
			break;
		left -= taken;
		skip_down = true;
	}
}

/*
 * A store short of slots deletes pending frees' fields itself, and waits
 * for those a flush has under way, until it has nr more slots or
 * redis_timeout= has passed.  Returns how many it put in slots.
 */
static unsigned int redis_alloc_flushed(struct redis_backend *b, struct redis_worker *w,
					uint64_t *slots, unsigned int nr)
{
	uint64_t deadline = clock_now_ns() + (uint64_t)b->timeout_ms * 1000000;
	unsigned int n = 0;

	if (redis_worker_reserve(w, REDIS_FREE_BATCH, 0))
		return 0;
	while (n < nr) {
		unsigned int taken, freed = redis_flush_batch(b, w->cmds, nr - n, true, &taken);
		bool is_empty = false;

		pthread_mutex_lock(&b->alloc_lock);
		n += redis_alloc(b, slots + n, nr - n);
		if (n < nr && !taken) {
			while (!b->nr_pending && b->nr_flushing && clock_now_ns() < deadline)
				redis_wait_until(&b->flushed, &b->alloc_lock, deadline);
			n += redis_alloc(b, slots + n, nr - n);
			is_empty = !b->nr_pending;
		}
		pthread_mutex_unlock(&b->alloc_lock);
		/* Nothing left, or what is left waits for a node that is down. */
		if (is_empty || (taken && !freed) || clock_now_ns() >= deadline)
			break;
	}
	return n;
}

/* Give slot back; alloc_lock held.  Returns whether the thread should delete the pending now. */
static bool redis_release(struct redis_backend *b, uint64_t slot)
{
	uint64_t bucket = slot >> REDIS_BUCKET_SHIFT;

	if (b->lens[slot]) {
		unsigned int bytes = b->lens[slot] + (b->key ? SEAL_TAG_BYTES : 0);

		b->bucket_pages[bucket]--;
		b->bucket_bytes[bucket] -= bytes;
		b->value_bytes -= bytes;
		b->nr_used--;
		b->lens[slot] = 0;
	}
	redis_pending_add(b, (uint32_t)slot);
	return b->nr_pending % REDIS_FREE_BATCH == 0;
}

/*
 * No I/O here: the callers hold the locks of the file or of reclaim.  The
 * thread deletes the fields; until then the slots wait in pending.
 */
static void redis_free(struct tier_backend *tb, const uint64_t *slots, unsigned int nr)
{
	struct redis_backend *b = to_redis(tb);
	bool is_kick = false;

	atomic_fetch_add(&b->nr_frees, nr);
	pthread_mutex_lock(&b->alloc_lock);
	for (unsigned int i = 0; i < nr; i++)
		is_kick |= redis_release(b, slots[i]);
	pthread_mutex_unlock(&b->alloc_lock);
	if (is_kick)
		redis_kick(b);
}

/* Compress and seal page for slot into out; returns the value's length and sets *len. */
static size_t redis_pack(struct redis_backend *b, struct redis_worker *w, uint64_t slot,
			 const void *page, unsigned char *out, uint16_t *len)
{
	unsigned char *data = b->key ? out + SEAL_TAG_BYTES : out;
	int n = b->codec->compress(w->ctx, page, PAGE_SIZE, data, PAGE_SIZE - 1);

	if (n <= 0) {
		memcpy(data, page, PAGE_SIZE);
		n = PAGE_SIZE;
	}
	*len = (uint16_t)n;
	if (!b->key)
		return (size_t)n;
	b->nonces[slot] = seal_next_nonce(b->key);
	seal_data(b->key, (struct seal_nonce){ b->nonces[slot], 0 }, slot, data, (size_t)n, data,
		  out);
	return (size_t)n + SEAL_TAG_BYTES;
}

static int redis_store_chunk(struct redis_backend *b, struct redis_worker *w, void *const *pages,
			     unsigned int nr, uint64_t *slots)
{
	struct redis_cmd *cmds;
	uint16_t lens[REDIS_CHUNK];
	unsigned int n, nr_cmds, stored = 0;
	uint64_t last_bucket = UINT64_MAX;
	int err = 0;

	pthread_mutex_lock(&b->alloc_lock);
	n = redis_alloc(b, slots, nr);
	pthread_mutex_unlock(&b->alloc_lock);
	if (n < nr)
		n += redis_alloc_flushed(b, w, slots + n, nr - n);
	if (!n) {
		atomic_fetch_add(&b->nr_reject_full, nr);
		return -ENOSPC;
	}
	cmds = w->cmds; /* after the flush, which may have grown them */
	for (unsigned int i = 0; i < n; i++) {
		unsigned char *out = w->buf + (size_t)i * (PAGE_SIZE + SEAL_TAG_BYTES);

		cmds[i] = (struct redis_cmd){ .kind = REDIS_SET, .slot = slots[i], .val = out };
		cmds[i].val_len = redis_pack(b, w, slots[i], pages[i], out, &lens[i]);
	}
	/* Each key touched gets its time to live, after its fields. */
	nr_cmds = n;
	for (unsigned int i = 0; b->ttl_ms && i < n; i++) {
		uint64_t bucket = slots[i] >> REDIS_BUCKET_SHIFT;

		if (bucket == last_bucket)
			continue;
		last_bucket = bucket;
		cmds[nr_cmds++] = (struct redis_cmd){ .kind = REDIS_EXPIRE, .slot = bucket };
	}
	redis_run(b, cmds, nr_cmds);

	while (stored < n && !cmds[stored].res)
		stored++;
	if (stored < n)
		err = cmds[stored].res == -ENOSPC ? -ENOSPC : -EIO;
	pthread_mutex_lock(&b->alloc_lock);
	for (unsigned int i = 0; i < stored; i++) {
		uint64_t bucket = slots[i] >> REDIS_BUCKET_SHIFT;
		unsigned int bytes = (unsigned int)cmds[i].val_len;

		b->lens[slots[i]] = lens[i];
		b->bucket_pages[bucket]++;
		b->bucket_bytes[bucket] += bytes;
		b->value_bytes += bytes;
		b->nr_used++;
	}
	/* Past the first failure: given back, what got there deleted by the thread. */
	for (unsigned int i = stored; i < n; i++)
		redis_release(b, slots[i]);
	pthread_mutex_unlock(&b->alloc_lock);
	if (stored < n) {
		redis_kick(b);
		if (err == -ENOSPC)
			atomic_fetch_add(&b->nr_reject_full, n - stored);
		else
			atomic_fetch_add(&b->nr_store_errors, n - stored);
		if (!stored)
			log_limited(&b->rl_store, LOG_WARNING,
				    "backend=redis: a store of %u pages failed: %s", n,
				    strerror(-err));
	}
	atomic_fetch_add(&b->nr_stores, stored);
	return stored ? (int)stored : err;
}

static void *redis_flusher(void *arg);
static void *redis_rearmer(void *arg);

/*
 * The threads start with the first store, not in create(): the daemon
 * forks into the background in between.  A mount that cannot have them
 * still works, without expiry re-armed or frees deleted but by the stores.
 */
static void redis_threads_start(struct redis_backend *b)
{
	pthread_mutex_lock(&b->thread_lock);
	if (!b->is_started && !b->is_stopping) {
		b->is_started = true;
		b->has_flusher = !pthread_create(&b->flusher, NULL, redis_flusher, b);
		if (!b->has_flusher)
			log_msg(LOG_WARNING, "backend=redis: no thread to delete freed pages");
		b->has_rearmer = b->ttl_ms && !pthread_create(&b->rearmer, NULL, redis_rearmer, b);
		if (b->ttl_ms && !b->has_rearmer)
			log_msg(LOG_WARNING, "backend=redis: no thread to re-arm the keys' expiry");
	}
	pthread_mutex_unlock(&b->thread_lock);
}

static int redis_store(struct tier_backend *tb, void *const *pages, unsigned int nr,
		       uint64_t *slots)
{
	struct redis_backend *b = to_redis(tb);
	struct redis_worker *w;
	unsigned int done = 0;
	int ret = 0;

	redis_threads_start(b);
	w = redis_worker_take(b);

	if (redis_worker_reserve(w, 2 * (nr < REDIS_CHUNK ? nr : REDIS_CHUNK),
				 nr < REDIS_CHUNK ? nr : REDIS_CHUNK)) {
		atomic_fetch_add(&b->nr_reject_alloc, nr);
		ret = -ENOMEM;
	}
	while (!ret && done < nr) {
		unsigned int chunk = nr - done < REDIS_CHUNK ? nr - done : REDIS_CHUNK;

		ret = redis_store_chunk(b, w, pages + done, chunk, slots + done);
		if (ret > 0) {
			done += (unsigned int)ret;
			ret = (unsigned int)ret < chunk ? 1 : 0;
		}
	}
	pthread_mutex_unlock(&w->lock);
	return done ? (int)done : ret;
}

/* Open the value of slot that r holds into page.  Returns 0 or -EIO. */
static int redis_unpack(struct redis_backend *b, struct redis_worker *w, uint64_t slot,
			const redisReply *r, void *page, unsigned char *scratch)
{
	size_t len = b->lens[slot];
	unsigned char *data = len == PAGE_SIZE ? page : scratch;

	if (!len || r->len != len + (b->key ? SEAL_TAG_BYTES : 0))
		return -EIO;
	memcpy(data, r->str + (b->key ? SEAL_TAG_BYTES : 0), len);
	if (b->key && seal_open(b->key, (struct seal_nonce){ b->nonces[slot], 0 }, slot, data, len,
				(const unsigned char *)r->str)) {
		atomic_fetch_add(&b->nr_decrypt_errors, 1);
		return -EIO;
	}
	if (len == PAGE_SIZE)
		return 0;
	return b->codec->decompress(w->ctx, data, len, page, PAGE_SIZE);
}

static int redis_load(struct tier_backend *tb, const uint64_t *slots, void *const *pages,
		      unsigned int nr)
{
	struct redis_backend *b = to_redis(tb);
	struct redis_worker *w = redis_worker_take(b);
	int ret = 0;

	if (redis_worker_reserve(w, nr < REDIS_CHUNK ? nr : REDIS_CHUNK, 1)) {
		pthread_mutex_unlock(&w->lock);
		return -ENOMEM;
	}
	for (unsigned int done = 0; done < nr && !ret;) {
		unsigned int chunk = nr - done < REDIS_CHUNK ? nr - done : REDIS_CHUNK;

		for (unsigned int i = 0; i < chunk; i++)
			w->cmds[i] =
				(struct redis_cmd){ .kind = REDIS_GET, .slot = slots[done + i] };
		redis_run(b, w->cmds, chunk);
		for (unsigned int i = 0; i < chunk; i++) {
			uint64_t slot = slots[done + i];

			if (!ret && w->cmds[i].res)
				ret = w->cmds[i].res == -ENOENT ? -EIO : w->cmds[i].res;
			if (!ret &&
			    redis_unpack(b, w, slot, w->cmds[i].reply, pages[done + i], w->buf))
				ret = -EIO;
			if (w->cmds[i].reply)
				freeReplyObject(w->cmds[i].reply);
			if (ret && ret != -ENOMEM)
				ret = -EIO;
		}
		done += chunk;
	}
	pthread_mutex_unlock(&w->lock);
	if (ret) {
		atomic_fetch_add(&b->nr_load_errors, 1);
		log_limited(&b->rl_load, LOG_WARNING,
			    "backend=redis: a load of %u pages (slot %llu first) failed: %s", nr,
			    (unsigned long long)slots[0], strerror(-ret));
		return ret;
	}
	atomic_fetch_add(&b->nr_loads, nr);
	return 0;
}

/* ---- the keys' time to live, and the frees left over ---- */

/*
 * UNLINK every key ever used, within one redis_timeout= for them all: past
 * it, keys on nodes that are down are left to expire, and the others get
 * one try each, so that unmount takes as long whatever the mount's size.
 */
static void redis_unlink_all(struct redis_backend *b, struct redis_cmd *cmds)
{
	uint64_t deadline = clock_now_ns() + (uint64_t)b->timeout_ms * 1000000;
	uint64_t nr_buckets, bucket = 0;

	pthread_mutex_lock(&b->alloc_lock);
	nr_buckets = (b->cursor + REDIS_BUCKET_SLOTS - 1) >> REDIS_BUCKET_SHIFT;
	pthread_mutex_unlock(&b->alloc_lock);
	while (bucket < nr_buckets) {
		bool is_late = clock_now_ns() >= deadline;
		unsigned int n = 0;

		pthread_rwlock_rdlock(&b->map_lock);
		for (; bucket < nr_buckets && n < REDIS_FREE_BATCH; bucket++)
			if (!is_late || !b->nodes[b->slot_node[b->bucket_hash[bucket]]]->is_down)
				cmds[n++] =
					(struct redis_cmd){ .kind = REDIS_UNLINK, .slot = bucket };
		pthread_rwlock_unlock(&b->map_lock);
		if (n)
			redis_run_until(b, cmds, n, deadline);
	}
}

/*
 * PEXPIRE every key that holds pages: first those on nodes that are up,
 * then those on nodes that are down, so that a node that does not answer
 * holds up no other's.  Those go as long as the node answers some.
 */
static void redis_rearm(struct redis_backend *b, struct redis_cmd *cmds)
{
	uint64_t nr_buckets;

	pthread_mutex_lock(&b->alloc_lock);
	nr_buckets = (b->cursor + REDIS_BUCKET_SLOTS - 1) >> REDIS_BUCKET_SHIFT;
	pthread_mutex_unlock(&b->alloc_lock);
	for (int is_down = 0; is_down < 2; is_down++) {
		uint64_t bucket = 0;

		while (bucket < nr_buckets && !atomic_load(&b->is_stopping)) {
			unsigned int n = 0, nr_done = 0;

			pthread_rwlock_rdlock(&b->map_lock);
			pthread_mutex_lock(&b->alloc_lock);
			for (; bucket < nr_buckets && n < REDIS_FREE_BATCH; bucket++) {
				uint8_t node = b->slot_node[b->bucket_hash[bucket]];

				if (b->bucket_pages[bucket] && b->nodes[node]->is_down == is_down)
					cmds[n++] = (struct redis_cmd){ .kind = REDIS_EXPIRE,
									.slot = bucket };
			}
			pthread_mutex_unlock(&b->alloc_lock);
			pthread_rwlock_unlock(&b->map_lock);
			if (!n)
				continue;
			redis_run(b, cmds, n);
			for (unsigned int i = 0; i < n; i++)
				nr_done += !cmds[i].res;
			if (is_down && !nr_done)
				break;
		}
	}
}

/* CLOCK_BOOTTIME now: a time to live runs on while this machine sleeps. */
static uint64_t redis_boottime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_BOOTTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void *redis_flusher(void *arg)
{
	struct redis_backend *b = arg;

	pthread_mutex_lock(&b->thread_lock);
	while (!b->is_stopping) {
		if (!b->is_flush_wanted)
			redis_wait_until(&b->flush_cond, &b->thread_lock,
					 clock_now_ns() + 1000000000);
		b->is_flush_wanted = false;
		if (b->is_stopping)
			break;
		pthread_mutex_unlock(&b->thread_lock);
		if (redis_has_pending(b))
			redis_flush_frees(b);
		pthread_mutex_lock(&b->thread_lock);
	}
	pthread_mutex_unlock(&b->thread_lock);
	return NULL;
}

/*
 * Every third of redis_ttl=, a minute at most, each key gets its whole time
 * to live again.  A daemon stopped (SIGSTOP, a machine asleep) re-arms
 * nothing: past redis_ttl= its pages are gone, which it says when it goes on.
 */
static void *redis_rearmer(void *arg)
{
	struct redis_backend *b = arg;
	uint64_t ttl_ns = (uint64_t)b->ttl_ms * 1000000;
	uint64_t every_ns = ttl_ns / 3 < 60000000000u ? ttl_ns / 3 : 60000000000u;
	uint64_t due_ns = clock_now_ns() + every_ns, armed_ns = redis_boottime_ns();

	pthread_mutex_lock(&b->thread_lock);
	while (!b->is_stopping) {
		uint64_t now_ns;

		if (clock_now_ns() < due_ns) {
			redis_wait_until(&b->rearm_cond, &b->thread_lock, due_ns);
			continue;
		}
		pthread_mutex_unlock(&b->thread_lock);
		now_ns = redis_boottime_ns();
		if (now_ns - armed_ns >= ttl_ns)
			log_msg(LOG_ERR,
				"backend=redis: the keys' time to live was last re-armed %llu s ago, "
				"past redis_ttl=%u s (the daemon stopped, or the machine asleep): "
				"the pages stored before may be gone",
				(unsigned long long)((now_ns - armed_ns) / 1000000000),
				b->ttl_ms / 1000);
		/* Due again a period after this one began, however long it took. */
		due_ns = clock_now_ns() + every_ns;
		armed_ns = now_ns;
		redis_rearm(b, b->rearm_cmds);
		pthread_mutex_lock(&b->thread_lock);
	}
	pthread_mutex_unlock(&b->thread_lock);
	return NULL;
}

/* ---- stats ---- */

static uint64_t redis_lat_pct(const struct redis_node *node, unsigned int pct)
{
	uint64_t total = 0, seen = 0;

	for (int i = 0; i < REDIS_LAT_BUCKETS; i++)
		total += atomic_load(&node->lat[i]);
	for (int i = 0; i < REDIS_LAT_BUCKETS && total; i++) {
		seen += atomic_load(&node->lat[i]);
		if (seen * 100 >= total * pct)
			return 2ULL << i; /* the bucket's upper bound, µs */
	}
	return 0;
}

static void redis_get_stats(struct tier_backend *tb, struct backend_stats *st)
{
	struct redis_backend *b = to_redis(tb);

	memset(st, 0, sizeof(*st));
	pthread_mutex_lock(&b->alloc_lock);
	st->stored_pages = b->nr_used;
	st->pool_bytes = b->value_bytes;
	/* Slot metadata of the slots handed out so far, the free stack, the pending ring. */
	st->meta_bytes = b->cursor * (sizeof(*b->lens) + sizeof(*b->gens) +
				      (b->key ? sizeof(*b->nonces) : 0) + sizeof(*b->free_stack) +
				      sizeof(*b->pending)) +
			 ((b->cursor >> REDIS_BUCKET_SHIFT) + 1) *
				 (sizeof(*b->bucket_hash) + sizeof(*b->bucket_pages) +
				  sizeof(*b->bucket_bytes)) +
			 (b->key ? seal_key_bytes() : 0);
	pthread_mutex_unlock(&b->alloc_lock);
	for (int i = 0; i < REDIS_WORKERS; i++)
		st->meta_bytes +=
			b->workers[i].buf_len + b->workers[i].cmds_cap * sizeof(struct redis_cmd);
	st->meta_bytes += sizeof(b->flush_cmds) + sizeof(b->rearm_cmds);
	st->ram_bytes = st->meta_bytes;
	st->stored_bytes = st->stored_pages * PAGE_SIZE;
	st->capacity_bytes = b->nr_slots * PAGE_SIZE;
	st->nr_stores = atomic_load(&b->nr_stores);
	st->nr_loads = atomic_load(&b->nr_loads);
	st->nr_frees = atomic_load(&b->nr_frees);
	st->nr_store_errors = atomic_load(&b->nr_store_errors);
	st->nr_load_errors = atomic_load(&b->nr_load_errors);
	st->nr_reject_full = atomic_load(&b->nr_reject_full);
	st->nr_reject_alloc = atomic_load(&b->nr_reject_alloc);
	st->nr_decrypt_errors = atomic_load(&b->nr_decrypt_errors);
}

static unsigned int redis_get_nodes(struct tier_backend *tb, struct backend_node_stats *out,
				    unsigned int max)
{
	struct redis_backend *b = to_redis(tb);
	unsigned int nr = atomic_load(&b->nr_nodes);
	uint64_t nr_buckets;

	if (nr > max)
		nr = max;
	memset(out, 0, nr * sizeof(*out));
	for (unsigned int i = 0; i < nr; i++) {
		const struct redis_node *node = b->nodes[i];

		snprintf(out[i].name, sizeof(out[i].name), "%s:%d", node->host, node->port);
		out[i].is_down = node->is_down;
		out[i].nr_round_trips = atomic_load(&node->nr_round_trips);
		out[i].nr_commands = atomic_load(&node->nr_commands);
		out[i].nr_redirects = atomic_load(&node->nr_redirects);
		out[i].nr_errors = atomic_load(&node->nr_errors);
		out[i].nr_failovers = atomic_load(&node->nr_failovers);
		out[i].latency_p50_us = redis_lat_pct(node, 50);
		out[i].latency_p99_us = redis_lat_pct(node, 99);
	}
	/* Where each key lives now, by the map. */
	pthread_rwlock_rdlock(&b->map_lock);
	pthread_mutex_lock(&b->alloc_lock);
	nr_buckets = (b->cursor + REDIS_BUCKET_SLOTS - 1) >> REDIS_BUCKET_SHIFT;
	for (uint64_t k = 0; k < nr_buckets; k++) {
		unsigned int n = b->slot_node[b->bucket_hash[k]];

		if (n < nr && b->bucket_pages[k]) {
			out[n].is_master = true;
			out[n].stored_pages += b->bucket_pages[k];
			out[n].stored_bytes += b->bucket_bytes[k];
		}
	}
	for (unsigned int s = 0; s < REDIS_HASH_SLOTS; s++)
		if (b->slot_node[s] < nr)
			out[b->slot_node[s]].is_master = true;
	pthread_mutex_unlock(&b->alloc_lock);
	pthread_rwlock_unlock(&b->map_lock);
	return nr;
}

/* ---- set up ---- */

/*
 * redis_auth=FILE: "PASSWORD" or "USER PASSWORD" on its first line, in a
 * regular file of the daemon's user that no one else may read.
 */
static int redis_read_auth(struct redis_backend *b, const char *path)
{
	char buf[1024], *nl, *sp;
	struct stat st;
	ssize_t len;
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0) {
		log_msg(LOG_ERR, "redis_auth=%s: %s", path, strerror(errno));
		return -errno;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
	    (st.st_mode & 077)) {
		log_msg(LOG_ERR,
			"redis_auth=%s: must be a regular file of uid %u that only it can read "
			"and write (mode 0600 or stricter)",
			path, (unsigned int)geteuid());
		close(fd);
		return -EPERM;
	}
	len = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (len <= 0) {
		log_msg(LOG_ERR, "redis_auth=%s: empty", path);
		return -EINVAL;
	}
	buf[len] = '\0';
	nl = strchr(buf, '\n');
	if (nl)
		*nl = '\0';
	sp = strchr(buf, ' ');
	if (sp) {
		*sp = '\0';
		b->user = strdup(buf);
	}
	b->password = strdup(sp ? sp + 1 : buf);
	sodium_memzero(buf, sizeof(buf));
	if (!b->password || (sp && !b->user) || !b->password[0])
		return b->password && !b->password[0] ? -EINVAL : -ENOMEM;
	return 0;
}

static void redis_destroy(struct tier_backend *tb)
{
	struct redis_backend *b = to_redis(tb);
	struct redis_worker *w;
	bool is_unlinked = false;

	if (!b)
		return;
	pthread_mutex_lock(&b->thread_lock);
	b->is_stopping = true;
	pthread_cond_signal(&b->flush_cond);
	pthread_cond_signal(&b->rearm_cond);
	pthread_mutex_unlock(&b->thread_lock);
	/*
	 * The mount's keys go with it, while the threads end what they have
	 * under way (an HDEL or PEXPIRE that comes after finds no key), so that
	 * a node that does not answer is waited for once, not once each.
	 */
	w = b->cursor ? redis_worker_take(b) : NULL;
	if (w && !redis_worker_reserve(w, REDIS_FREE_BATCH, 0)) {
		redis_unlink_all(b, w->cmds);
		is_unlinked = true;
	}
	if (b->has_flusher)
		pthread_join(b->flusher, NULL);
	if (b->has_rearmer)
		pthread_join(b->rearmer, NULL);
	if (b->cursor && !is_unlinked)
		redis_unlink_all(b, b->rearm_cmds);
	if (w)
		pthread_mutex_unlock(&w->lock);
	for (unsigned int i = 0; i < atomic_load(&b->nr_nodes); i++) {
		for (int k = 0; k < REDIS_CONNS; k++) {
			redis_conn_drop(&b->nodes[i]->conns[k]);
			pthread_mutex_destroy(&b->nodes[i]->conns[k].lock);
		}
		free(b->nodes[i]);
	}
	for (int i = 0; i < REDIS_WORKERS; i++) {
		if (b->workers[i].ctx)
			b->codec->ctx_free(b->workers[i].ctx);
		free(b->workers[i].buf);
		free(b->workers[i].cmds);
		pthread_mutex_destroy(&b->workers[i].lock);
	}
	seal_key_free(b->key);
	if (b->password)
		sodium_memzero(b->password, strlen(b->password));
	free(b->password);
	free(b->user);
	free(b->nonces);
	free(b->lens);
	free(b->gens);
	free(b->bucket_hash);
	free(b->bucket_pages);
	free(b->bucket_bytes);
	free(b->free_stack);
	free(b->pending);
	pthread_mutex_destroy(&b->alloc_lock);
	pthread_cond_destroy(&b->flushed);
	pthread_mutex_destroy(&b->refresh_lock);
	pthread_rwlock_destroy(&b->map_lock);
	pthread_mutex_destroy(&b->thread_lock);
	pthread_cond_destroy(&b->flush_cond);
	pthread_cond_destroy(&b->rearm_cond);
	free(b);
}

/*
 * With no redis_auth=, whether the first node that answers takes commands
 * from anyone (a PING answered, not NOAUTH): then whoever can reach it can
 * delete the mount's pages, and with encrypt=off read them, which the
 * mount says.
 */
static void redis_warn_if_open(struct redis_backend *b)
{
	for (unsigned int i = 0; !b->password && i < atomic_load(&b->nr_nodes); i++) {
		struct redis_node *node = b->nodes[i];
		struct redis_conn *rc = redis_conn_take(node);
		redisReply *r = NULL;
		bool is_open;

		if (rc->c || !redis_connect(b, node, rc)) {
			r = redisCommand(rc->c, "PING");
			if (!r)
				redis_conn_drop(rc);
		}
		pthread_mutex_unlock(&rc->lock);
		if (!r)
			continue;
		is_open = r->type != REDIS_REPLY_ERROR;
		freeReplyObject(r);
		if (is_open)
			log_msg(LOG_WARNING,
				"backend=redis: %s:%d answers without a password: whoever can "
				"connect to it can delete this mount's pages%s; have it require "
				"one (requirepass, or an ACL user) and give it in redis_auth=",
				node->host, node->port,
				b->key ? "" : ", and read them (encrypt=off)");
		return;
	}
}

/* The seeds of cfg->path, "HOST:PORT[,HOST:PORT...]", as the first nodes. */
static int redis_add_seeds(struct redis_backend *b, const char *list)
{
	while (*list) {
		size_t len = strcspn(list, ",");
		char host[256];
		int port;

		if (!redis_parse_addr(list, len, host, sizeof(host), &port)) {
			log_msg(LOG_ERR, "backend=redis://%s: want HOST:PORT[,HOST:PORT...]", list);
			return -EINVAL;
		}
		if (redis_node_get(b, host, port) < 0)
			return -ENOSPC;
		list += len + (list[len] == ',');
	}
	return atomic_load(&b->nr_nodes) ? 0 : -EINVAL;
}

/*
 * cfg->path: the seed nodes; capacity_bytes: how much page data the mount
 * may put there; the codec; sealed unless is_plaintext; redis_*.  Fails
 * when no seed answers.
 */
static int redis_create(const struct backend_config *cfg, struct tier_backend **out)
{
	struct redis_backend *b;
	pthread_condattr_t monotonic;
	unsigned char id[8];
	uint64_t nr_buckets;
	int ret;

	if (!cfg->path || !cfg->codec || cfg->capacity_bytes < PAGE_SIZE ||
	    cfg->capacity_bytes / PAGE_SIZE > UINT32_MAX)
		return -EINVAL;
	if (sodium_init() < 0)
		return -EIO;
	b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	b->base.ops = &tier_backend_redis;
	b->codec = cfg->codec;
	b->codec_level = cfg->codec_level;
	b->timeout_ms = cfg->redis_timeout_ms ? cfg->redis_timeout_ms : REDIS_DEFAULT_TIMEOUT_MS;
	b->ttl_ms = cfg->redis_ttl_s * 1000;
	b->nr_wait = cfg->redis_wait;
	pthread_rwlock_init(&b->map_lock, NULL);
	pthread_mutex_init(&b->refresh_lock, NULL);
	pthread_mutex_init(&b->alloc_lock, NULL);
	pthread_mutex_init(&b->thread_lock, NULL);
	pthread_condattr_init(&monotonic);
	pthread_condattr_setclock(&monotonic, CLOCK_MONOTONIC);
	pthread_cond_init(&b->flushed, &monotonic);
	pthread_cond_init(&b->flush_cond, &monotonic);
	pthread_cond_init(&b->rearm_cond, &monotonic);
	pthread_condattr_destroy(&monotonic);
	for (int i = 0; i < REDIS_WORKERS; i++)
		pthread_mutex_init(&b->workers[i].lock, NULL);
	randombytes_buf(id, sizeof(id));
	for (int i = 0; i < 8; i++)
		snprintf(b->id + 2 * i, 3, "%02x", id[i]);

	b->nr_slots = cfg->capacity_bytes / PAGE_SIZE;
	nr_buckets = (b->nr_slots + REDIS_BUCKET_SLOTS - 1) >> REDIS_BUCKET_SHIFT;
	ret = -ENOMEM;
	b->lens = calloc(b->nr_slots, sizeof(*b->lens));
	b->gens = calloc(b->nr_slots, sizeof(*b->gens));
	b->free_stack = calloc(b->nr_slots, sizeof(*b->free_stack));
	b->pending = calloc(b->nr_slots, sizeof(*b->pending));
	b->bucket_hash = calloc(nr_buckets, sizeof(*b->bucket_hash));
	b->bucket_pages = calloc(nr_buckets, sizeof(*b->bucket_pages));
	b->bucket_bytes = calloc(nr_buckets, sizeof(*b->bucket_bytes));
	if (!b->lens || !b->gens || !b->free_stack || !b->pending || !b->bucket_hash ||
	    !b->bucket_pages || !b->bucket_bytes)
		goto fail;
	for (uint64_t k = 0; k < nr_buckets; k++)
		b->bucket_hash[k] = redis_key_hash(b, k);
	for (int i = 0; i < REDIS_WORKERS; i++) {
		ret = b->codec->ctx_new(b->codec_level, &b->workers[i].ctx);
		if (ret)
			goto fail;
	}
	if (!cfg->is_plaintext) {
		b->nonces = calloc(b->nr_slots, sizeof(*b->nonces));
		ret = b->nonces ? seal_key_new(!cfg->is_xchacha, &b->key) : -ENOMEM;
		if (ret)
			goto fail;
	}
	if (cfg->redis_auth_path) {
		ret = redis_read_auth(b, cfg->redis_auth_path);
		if (ret)
			goto fail;
	}
	ret = redis_add_seeds(b, cfg->path);
	if (ret)
		goto fail;
	ret = redis_refresh(b, true);
	if (ret) {
		log_msg(LOG_ERR, "backend=redis://%s: no node answered", cfg->path);
		goto fail;
	}
	redis_warn_if_open(b);
	log_msg(LOG_INFO, "backend=redis://%s: %s, %u node%s, keys tfs:{%s:*}", cfg->path,
		b->is_cluster ? "a cluster" : "a plain server", atomic_load(&b->nr_nodes),
		atomic_load(&b->nr_nodes) == 1 ? "" : "s", b->id);
	*out = &b->base;
	return 0;

fail:
	redis_destroy(&b->base);
	return ret;
}

const struct tier_backend_ops tier_backend_redis = {
	.name = "redis",
	.is_sync = false,
	.is_compressed = true,
	.create = redis_create,
	.destroy = redis_destroy,
	.store = redis_store,
	.load = redis_load,
	.free = redis_free,
	.get_stats = redis_get_stats,
	.get_nodes = redis_get_nodes,
};
