/* SPDX-License-Identifier: MIT */
/*
 * Page compressors for the zpool backend.  A codec is one .c file in
 * backends/ ending with a designated-initializer instance; codec_table
 * lists the compiled-in ones (meson leaves out a codec whose library is
 * missing).  Only a codec's own file includes its library's header.
 */
#ifndef TIERFS_CODEC_H
#define TIERFS_CODEC_H

#include <stddef.h>

struct codec_ctx;

struct codec {
	const char *name; /* "lz4", "zstd" */
	int default_level;
	int min_level, max_level;

	/*
	 * A context for one thread (contexts are not shared between threads).
	 * Returns 0 or -ENOMEM.
	 */
	int (*ctx_new)(int level, struct codec_ctx **out);
	void (*ctx_free)(struct codec_ctx *ctx);

	/*
	 * Compress src_len bytes into dst of dst_cap bytes.  Returns the
	 * compressed length, -ENOSPC when it does not fit in dst_cap (the
	 * caller then stores the page raw), or -EIO.
	 */
	int (*compress)(struct codec_ctx *ctx, const void *src, size_t src_len, void *dst,
			size_t dst_cap);

	/*
	 * Decompress src_len bytes into exactly dst_len bytes of dst.  Returns
	 * 0, or -EIO when the data is corrupt or does not expand to dst_len.
	 */
	int (*decompress)(struct codec_ctx *ctx, const void *src, size_t src_len, void *dst,
			  size_t dst_len);
};

/* NULL-terminated, in preference order: the codecs built in. */
extern const struct codec *const codec_table[];

/* Their names in table order, space-separated: "lz4 zstd". */
extern const char codec_names[];

/*
 * The codecs this build knows of but left out, each with why, e.g.
 * { "zstd", "libzstd missing" }; ends with { NULL, NULL }.
 */
extern const char *const codec_left_out[][2];

/* Why the codec of "NAME" or "NAME:LEVEL" is left out of this build, or NULL. */
const char *codec_why_left_out(const char *spec);

/*
 * Look up "NAME" or "NAME:LEVEL" (e.g. "zstd:3").  Returns 0 and sets
 * *codec and *level, or -EINVAL (unknown name, bad level).
 */
int codec_parse(const char *spec, const struct codec **codec, int *level);

#endif
