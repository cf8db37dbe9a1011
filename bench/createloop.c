// SPDX-License-Identifier: MIT
/*
 * Metadata benchmark: create, stat and unlink N empty files in one directory,
 * each phase timed on its own, and print operations per second.
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

enum createloop_phase { PHASE_CREATE, PHASE_STAT, PHASE_UNLINK, NR_PHASES };

static const char *const phase_names[NR_PHASES] = { "create", "stat", "unlink" };

static double now_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Returns 0, or -errno of the first failing call (reported on stderr). */
static int run_phase(int dir_fd, enum createloop_phase phase, long nr_files)
{
	char name[32];
	struct stat st;
	long i;
	int fd, ret;

	for (i = 0; i < nr_files; i++) {
		snprintf(name, sizeof(name), "f%ld", i);
		switch (phase) {
		case PHASE_CREATE:
			fd = openat(dir_fd, name, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644);
			if (fd < 0)
				goto fail;
			close(fd);
			break;
		case PHASE_STAT:
			if (fstatat(dir_fd, name, &st, 0) < 0)
				goto fail;
			break;
		case PHASE_UNLINK:
			if (unlinkat(dir_fd, name, 0) < 0)
				goto fail;
			break;
		default:
			return -EINVAL;
		}
	}
	return 0;
fail:
	ret = -errno;
	fprintf(stderr, "createloop: %s %s: %s\n", phase_names[phase], name, strerror(-ret));
	return ret;
}

int main(int argc, char **argv)
{
	double seconds[NR_PHASES], total = 0;
	long nr_files;
	char *end;
	int dir_fd, phase;

	if (argc != 3) {
		fprintf(stderr, "usage: createloop DIR NR_FILES\n");
		return 2;
	}
	errno = 0;
	nr_files = strtol(argv[2], &end, 10);
	if (errno || *end || nr_files <= 0) {
		fprintf(stderr, "createloop: bad NR_FILES '%s'\n", argv[2]);
		return 2;
	}
	dir_fd = open(argv[1], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dir_fd < 0) {
		fprintf(stderr, "createloop: %s: %s\n", argv[1], strerror(errno));
		return 1;
	}

	for (phase = 0; phase < NR_PHASES; phase++) {
		double start = now_seconds();

		if (run_phase(dir_fd, phase, nr_files) < 0) {
			close(dir_fd);
			return 1;
		}
		seconds[phase] = now_seconds() - start;
		total += seconds[phase];
	}
	close(dir_fd);

	/* One "name ops/s" pair a line, for scripts. */
	for (phase = 0; phase < NR_PHASES; phase++)
		printf("%s %.0f\n", phase_names[phase], nr_files / seconds[phase]);
	printf("all %.0f\n", NR_PHASES * nr_files / total);
	return 0;
}
