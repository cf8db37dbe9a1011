/* SPDX-License-Identifier: MIT */
/*
 * The daemon as a function, so that tierfs's main() and test builds of the
 * daemon share it.
 */
#ifndef TIERFS_DAEMON_H
#define TIERFS_DAEMON_H

struct tierfs;

/*
 * Run the daemon for argv.  after_init, if not NULL, is called once the
 * filesystem is set up and before it is mounted; a negative return stops
 * the daemon.  Returns the process exit status.
 */
int daemon_main(int argc, char **argv, int (*after_init)(struct tierfs *fs));

#endif
