/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * outdir.h — the output directory, held open from its check to the last file written in it.
 *
 * peaktrace runs as root and writes where a user points -o. A directory another user made (in
 * /tmp, say) could hold links named report.json & co. planted to redirect root's writes onto
 * root's own files. So the directory is opened once (no link followed at its last component
 * unless the link is root's or the caller's own), checked on that fd (owned by root or the caller, not
 * writable by group or others, unless --trust-output-dir), and every output is created relative
 * to that fd: O_CREAT|O_EXCL|O_NOFOLLOW, an existing name unlinked first (never truncated through,
 * so neither a symlink nor a hard link is written through), mode 0644 at most whatever the umask.
 *
 * Writers keep building "DIR/name" strings as before; the functions below find the held
 * directory whose path, as given, is the string's prefix. A path under no held directory is
 * refused (EXDEV) by the pt_out_* calls: a writer that was not routed here fails closed.
 * (A leaf: includes nothing of peaktrace.)
 */
#ifndef PEAKTRACE_UTIL_OUTDIR_H
#define PEAKTRACE_UTIL_OUTDIR_H
#include <stdbool.h>
#include <stdio.h>

/* --trust-output-dir: a directory owned by another user, or writable by group or others, is
 * accepted (files are still created with O_EXCL|O_NOFOLLOW in it, and a DIR that is another
 * user's symlink is still refused). Set once, from the command line. */
void pt_outdir_set_trust(bool trust);
bool pt_outdir_trusted(void);

/* Create dir if absent (parents 0755 as `mkdir -p`, dir itself 0700), open it, check it and
 * test that a file can be created in it (an unnamed O_TMPFILE, or a uniquely named probe made
 * with O_EXCL|O_NOFOLLOW and removed), then hold it. 0, or -errno after one "peaktrace: " line
 * on stderr saying why. Calling it again for a held path returns 0. */
int pt_outdir_prepare(const char *dir);

/* path "DIR/[SUB/...]NAME" under a held DIR: a new regular file, opened for writing, the old
 * NAME (a file, a symlink, a hard link) unlinked first. SUB directories are opened without
 * following links and checked as DIR is. fd / FILE*, or -1 / NULL with errno set. */
int pt_out_open(const char *path);
FILE *pt_out_fopen(const char *path);
/* "DIR/[SUB/...]NAME" as a directory: made 0700 if absent, checked. 0 or -errno. */
int pt_out_mkdir(const char *path);
/* Remove "DIR/.../NAME" (a half-written output) through the held directory. 0 or -errno. */
int pt_out_unlink(const char *path);

/* A file the user named (--verifier-stats FILE, --summary FILE...): theirs to place, so the path
 * is followed up to its last component, but that component is not followed if it is a link,
 * and the file is 0644 at most. Under a held directory it goes through pt_out_open. */
int pt_user_open(const char *path);
FILE *pt_user_fopen(const char *path);

/* Drop every held directory (tests; exit closes them anyway). */
void pt_outdir_release(void);

#endif
