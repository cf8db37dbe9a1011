// SPDX-License-Identifier: MIT
/*
 * Does freeing a big file hold other names up?  Writes SIZE MiB to DIR/big,
 * then unlinks it while a second thread looks up names in DIR/probe that
 * miss every cache (each a FUSE round trip on tierfs), and prints how long
 * the unlink took and the slowest lookup during it, against the slowest
 * before it.  The lookups are in another directory: the kernel holds DIR
 * itself locked for the whole unlink, on any filesystem.
 *
 * usage: unlinkstall DIR SIZE_MB [ROUNDS]
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define CHUNK (1 << 20)

static uint64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

struct prober {
	int dir_fd;
	atomic_bool stop;
	atomic_int phase; /* 0: before the unlink, 1: during it, 2: after */
	uint64_t max_us[3];
	uint64_t nr[3];
	int err;
};

/* Negative lookups of names never asked before: no cache can answer them. */
static void *probe(void *arg)
{
	struct prober *p = arg;
	char name[32];
	struct stat st;

	for (uint64_t i = 0; !atomic_load(&p->stop); i++) {
		int phase = atomic_load(&p->phase);
		uint64_t t0 = now_us(), dt;

		snprintf(name, sizeof(name), "nx%llu", (unsigned long long)i);
		if (fstatat(p->dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 || errno != ENOENT) {
			p->err = errno ? errno : EEXIST;
			return NULL;
		}
		dt = now_us() - t0;
		/* A lookup that spans the unlink's start or end counts for it. */
		if (atomic_load(&p->phase) != phase)
			phase = 1;
		if (dt > p->max_us[phase])
			p->max_us[phase] = dt;
		p->nr[phase]++;
	}
	return NULL;
}

static int write_big(int dir_fd, long size_mb)
{
	uint64_t x = 0x9e3779b97f4a7c15u;
	uint64_t *buf = malloc(CHUNK);
	int fd = openat(dir_fd, "big", O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0644);
	int ret = 0;

	if (!buf || fd < 0) {
		ret = -errno;
		goto out;
	}
	for (long m = 0; m < size_mb; m++) {
		/* xorshift: pages that neither compress away nor are same-filled */
		for (size_t i = 0; i < CHUNK / sizeof(*buf); i++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			buf[i] = x;
		}
		if (write(fd, buf, CHUNK) != CHUNK) {
			ret = errno ? -errno : -EIO;
			goto out;
		}
	}
out:
	if (fd >= 0)
		close(fd);
	free(buf);
	return ret;
}

int main(int argc, char **argv)
{
	long size_mb, rounds = argc > 3 ? atol(argv[3]) : 3;
	int dir_fd, probe_fd, err;

	if (argc < 3 || (size_mb = atol(argv[2])) <= 0 || rounds <= 0) {
		fprintf(stderr, "usage: unlinkstall DIR SIZE_MB [ROUNDS]\n");
		return 2;
	}
	dir_fd = open(argv[1], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dir_fd < 0 || (mkdirat(dir_fd, "probe", 0755) && errno != EEXIST) ||
	    (probe_fd = openat(dir_fd, "probe", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
		fprintf(stderr, "unlinkstall: %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	printf("round unlink_ms lookups_during max_during_us max_before_us\n");
	for (long r = 0; r < rounds; r++) {
		struct prober p = { .dir_fd = probe_fd };
		pthread_t t;
		uint64_t t0, t1;

		err = write_big(dir_fd, size_mb);
		if (err) {
			fprintf(stderr, "unlinkstall: write %s/big: %s\n", argv[1], strerror(-err));
			return 1;
		}
		if (pthread_create(&t, NULL, probe, &p)) {
			fprintf(stderr, "unlinkstall: no thread\n");
			return 1;
		}
		usleep(100 * 1000);
		atomic_store(&p.phase, 1);
		t0 = now_us();
		err = unlinkat(dir_fd, "big", 0) ? errno : 0;
		t1 = now_us();
		atomic_store(&p.phase, 2);
		usleep(20 * 1000);
		atomic_store(&p.stop, true);
		pthread_join(t, NULL);
		if (err || p.err) {
			fprintf(stderr, "unlinkstall: %s\n", strerror(err ? err : p.err));
			return 1;
		}
		printf("%ld %.1f %llu %llu %llu\n", r + 1, (double)(t1 - t0) / 1000,
		       (unsigned long long)p.nr[1], (unsigned long long)p.max_us[1],
		       (unsigned long long)p.max_us[0]);
		fflush(stdout);
	}
	close(probe_fd);
	unlinkat(dir_fd, "probe", AT_REMOVEDIR);
	close(dir_fd);
	return 0;
}
