// SPDX-License-Identifier: MIT
/*
 * What only the redis backend has: commands that reach the server late.  A
 * write or a delete sent on a connection that broke can still land after
 * the slot's next store; the test replays them by hand (what the server
 * held after the first store written back, its fields deleted) and the
 * slot must read back its own page, never another's.  And a server that
 * stops answering (SIGSTOP): an unmount is as quick with many keys as with
 * a few.  Against the servers named by TIERFS_TEST_REDIS (HOST:PORT,...),
 * which redis_env.sh starts.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <hiredis/hiredis.h>

#include "check.h"
#include "tierfs/backend.h"
#include "tierfs/codec.h"

#define MAX_FIELDS 64

/* A field of the mount's keys as the server held it, and where. */
struct field {
	redisContext *c;
	char key[64];
	char name[32];
	size_t name_len;
	char value[PAGE_SIZE + 64];
	size_t value_len;
};

struct server {
	redisContext *c[BACKEND_MAX_NODES];
	unsigned int nr;
};

static int server_open(struct server *s, const char *list)
{
	s->nr = 0;
	while (*list && s->nr < BACKEND_MAX_NODES) {
		size_t len = strcspn(list, ",");
		char host[256];
		const char *colon = memrchr(list, ':', len);

		if (!colon || (size_t)(colon - list) >= sizeof(host))
			return -EINVAL;
		memcpy(host, list, (size_t)(colon - list));
		host[colon - list] = '\0';
		s->c[s->nr] = redisConnect(host, atoi(colon + 1));
		if (!s->c[s->nr] || s->c[s->nr]->err)
			return -EIO;
		s->nr++;
		list += len + (list[len] == ',');
	}
	return s->nr ? 0 : -EINVAL;
}

static void server_close(struct server *s)
{
	for (unsigned int i = 0; i < s->nr; i++)
		redisFree(s->c[i]);
}

/* Every field of the mount's keys on every node, into f; returns how many. */
static unsigned int snapshot(struct server *s, struct field *f)
{
	unsigned int nr = 0;

	for (unsigned int i = 0; i < s->nr; i++) {
		redisReply *keys = redisCommand(s->c[i], "KEYS tfs:*");

		for (size_t k = 0; keys && keys->type == REDIS_REPLY_ARRAY && k < keys->elements;
		     k++) {
			redisReply *all =
				redisCommand(s->c[i], "HGETALL %s", keys->element[k]->str);

			for (size_t e = 0; all && all->type == REDIS_REPLY_ARRAY &&
					   e + 1 < all->elements && nr < MAX_FIELDS;
			     e += 2) {
				redisReply *name = all->element[e], *value = all->element[e + 1];

				if (name->len > sizeof(f->name) || value->len > sizeof(f->value))
					continue;
				f[nr].c = s->c[i];
				snprintf(f[nr].key, sizeof(f[nr].key), "%s", keys->element[k]->str);
				memcpy(f[nr].name, name->str, name->len);
				f[nr].name_len = name->len;
				memcpy(f[nr].value, value->str, value->len);
				f[nr].value_len = value->len;
				nr++;
			}
			if (all)
				freeReplyObject(all);
		}
		if (keys)
			freeReplyObject(keys);
	}
	return nr;
}

static void replay(const struct field *f, unsigned int nr, bool is_delete)
{
	for (unsigned int i = 0; i < nr; i++) {
		redisReply *r = is_delete ?
					redisCommand(f[i].c, "HDEL %s %b", f[i].key, f[i].name,
						     f[i].name_len) :
					redisCommand(f[i].c, "HSET %s %b %b", f[i].key, f[i].name,
						     f[i].name_len, f[i].value, f[i].value_len);

		CHECK(r && r->type == REDIS_REPLY_INTEGER);
		if (r)
			freeReplyObject(r);
	}
}

static void random_page(unsigned int seed, unsigned char *page)
{
	uint64_t s = 0x9e3779b97f4a7c15ULL * (seed + 1);

	for (size_t i = 0; i < PAGE_SIZE; i++) {
		s ^= s << 13;
		s ^= s >> 7;
		s ^= s << 17;
		page[i] = (unsigned char)s;
	}
}

/*
 * One slot, stored with page a, freed and stored again with page b: the
 * write of a that lands after, and the delete of a's field that does, leave
 * b readable as b.
 */
static void test_late_commands(const char *seeds, bool is_plaintext)
{
	static struct field f[MAX_FIELDS];
	static unsigned char a[PAGE_SIZE], bb[PAGE_SIZE], got[PAGE_SIZE];
	const struct backend_config cfg = {
		.capacity_bytes = PAGE_SIZE, /* one slot: the second store reuses it */
		.codec = codec_table[0],
		.codec_level = codec_table[0]->default_level,
		.path = seeds,
		.is_plaintext = is_plaintext,
		.redis_timeout_ms = 5000,
		.redis_ttl_s = 60,
	};
	const struct tier_backend_ops *ops = backend_find("redis");
	struct tier_backend *b;
	struct server s;
	void *pa = a, *pb = bb, *pg = got;
	uint64_t slot_a, slot_b;
	unsigned int nr;

	check_set_context("encrypt=%s", is_plaintext ? "off" : "on");
	if (!CHECK_EQ(0, server_open(&s, seeds)))
		return;
	if (!CHECK_EQ(0, ops->create(&cfg, &b))) {
		server_close(&s);
		return;
	}
	random_page(1, a);
	random_page(2, bb);
	CHECK_EQ(1, b->ops->store(b, &pa, 1, &slot_a));
	nr = snapshot(&s, f);
	CHECK_EQ(1u, nr);
	b->ops->free(b, &slot_a, 1);
	CHECK_EQ(1, b->ops->store(b, &pb, 1, &slot_b));
	CHECK_EQ(slot_a, slot_b);

	/* a's write, resent on a connection that broke, lands now. */
	replay(f, nr, false);
	memset(got, 0, sizeof(got));
	CHECK_EQ(0, b->ops->load(b, &slot_b, &pg, 1));
	CHECK(memcmp(got, a, PAGE_SIZE) != 0);
	CHECK_MEM(bb, got, PAGE_SIZE);

	/* So does the delete of a's field. */
	replay(f, nr, true);
	memset(got, 0, sizeof(got));
	CHECK_EQ(0, b->ops->load(b, &slot_b, &pg, 1));
	CHECK_MEM(bb, got, PAGE_SIZE);

	b->ops->free(b, &slot_b, 1);
	b->ops->destroy(b);
	server_close(&s);
	check_clear_context();
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* The process id of the server c is connected to, from INFO; 0 if none. */
static pid_t server_pid(redisContext *c)
{
	redisReply *r = redisCommand(c, "INFO server");
	const char *p = r && r->str ? strstr(r->str, "process_id:") : NULL;
	pid_t pid = p ? (pid_t)atoi(p + 11) : 0;

	if (r)
		freeReplyObject(r);
	return pid;
}

static void unlink_keys(redisContext *c)
{
	redisReply *keys = redisCommand(c, "KEYS tfs:*");

	for (size_t k = 0; keys && keys->type == REDIS_REPLY_ARRAY && k < keys->elements; k++)
		freeReplyObject(redisCommand(c, "UNLINK %s", keys->element[k]->str));
	if (keys)
		freeReplyObject(keys);
}

/*
 * Keys in six runs of deletes' worth (a run is 1024 keys, 1 GiB of pages),
 * the server paused, the backend destroyed: within redis_timeout= and a
 * little, not a redis_timeout= a run.
 */
static void test_destroy_paused(const char *seeds)
{
	enum { NR_PAGES = 6 * 1024 * 256, BATCH = 4096, TIMEOUT_MS = 500 };
	static unsigned char zero[PAGE_SIZE];
	static void *ptr[BATCH];
	static uint64_t slots[BATCH];
	const struct backend_config cfg = {
		.capacity_bytes = (uint64_t)NR_PAGES * PAGE_SIZE,
		.codec = codec_table[0],
		.codec_level = codec_table[0]->default_level,
		.path = seeds,
		.redis_timeout_ms = TIMEOUT_MS,
		.redis_ttl_s = 60,
	};
	const struct tier_backend_ops *ops = backend_find("redis");
	struct tier_backend *b;
	struct server s;
	uint64_t t0, ms;
	pid_t pid;

	check_set_context("destroy, the server paused");
	if (!CHECK_EQ(0, server_open(&s, seeds)))
		return;
	pid = server_pid(s.c[0]);
	if (!CHECK(pid > 0) || !CHECK_EQ(0, ops->create(&cfg, &b))) {
		server_close(&s);
		return;
	}
	for (unsigned int i = 0; i < BATCH; i++)
		ptr[i] = zero;
	for (unsigned int i = 0; i < NR_PAGES; i += BATCH)
		if (!CHECK_EQ(BATCH, b->ops->store(b, ptr, BATCH, slots)))
			break;
	kill(pid, SIGSTOP);
	t0 = now_ms();
	b->ops->destroy(b);
	ms = now_ms() - t0;
	kill(pid, SIGCONT);
	printf("# destroy with the server paused, redis_timeout=%u: %llu ms\n", TIMEOUT_MS,
	       (unsigned long long)ms);
	CHECK(ms < 3 * TIMEOUT_MS);
	unlink_keys(s.c[0]);
	server_close(&s);
	check_clear_context();
}

int main(void)
{
	const char *seeds = getenv("TIERFS_TEST_REDIS");

	if (!seeds || !backend_find("redis")) {
		printf("# TIERFS_TEST_REDIS is not set: skipped\n");
		return T_EXIT_SKIP;
	}
	test_late_commands(seeds, true);
	test_late_commands(seeds, false);
	if (!strchr(seeds, ','))
		test_destroy_paused(seeds);
	else
		printf("# a cluster: the server paused is tested on a plain one\n");
	return check_done("redis");
}
