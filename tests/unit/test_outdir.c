// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* test_outdir — the held output directory (util/outdir.h): planted links and hard links are
 * replaced, never written through; unsafe directories refused; modes whatever the umask; paths
 * outside a held directory refused. The ownership cases need root (chown to nobody). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "check.h"
#include "util/outdir.h"

#define NOBODY 65534
#define SECRET "root secret\n"

static char base[256];

static char *at(const char *rel)
{
	static char buf[8][512];
	static int k;

	k = (k + 1) % 8;
	snprintf(buf[k], sizeof(buf[k]), "%s/%s", base, rel);
	return buf[k];
}

static void put(const char *path, const char *text, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);

	if (fd >= 0) {
		if (write(fd, text, strlen(text)) < 0)
			perror(path);
		close(fd);
	}
	chmod(path, mode);
}

static int same(const char *path, const char *text)
{
	char buf[256] = { 0 };
	int fd = open(path, O_RDONLY), n;

	if (fd < 0)
		return 0;
	n = (int)read(fd, buf, sizeof(buf) - 1);
	close(fd);
	return n == (int)strlen(text) && !memcmp(buf, text, (size_t)n);
}

static int write_out(const char *path, const char *text)
{
	FILE *f = pt_out_fopen(path);

	if (!f)
		return -errno;
	fputs(text, f);
	return fclose(f) ? -errno : 0;
}

static mode_t mode_of(const char *path)
{
	struct stat st;

	return lstat(path, &st) ? (mode_t)-1 : st.st_mode;
}

static void test_create_and_links(void)
{
	struct stat st;

	CHECK(pt_outdir_prepare(at("made/sub/out")) == 0, "missing DIR and parents created");
	CHECK((mode_of(at("made/sub/out")) & 07777) == 0700, "DIR peaktrace made is 0700 (got %o)",
	      mode_of(at("made/sub/out")) & 07777);
	CHECK((mode_of(at("made/sub")) & 07777) == (0755 & ~(mode_t)022), "parents as mkdir -p (0755)");
	CHECK(pt_outdir_prepare(at("made/sub/out/")) == 0, "the same DIR again (trailing slash): held");

	put(at("victim"), SECRET, 0600);
	symlink(at("victim"), at("made/sub/out/report.json"));
	CHECK(write_out(at("made/sub/out/report.json"), "{}\n") == 0, "write over a planted symlink");
	CHECK(same(at("victim"), SECRET), "the symlink's target unchanged");
	CHECK(S_ISREG(mode_of(at("made/sub/out/report.json"))) &&
	      same(at("made/sub/out/report.json"), "{}\n"), "the link replaced by a regular file");

	symlink(at("victim-new"), at("made/sub/out/report.html"));
	CHECK(write_out(at("made/sub/out/report.html"), "<p>\n") == 0, "write over a dangling symlink");
	CHECK(access(at("victim-new"), F_OK) != 0, "the dangling link's target not created");

	link(at("victim"), at("made/sub/out/report.txt"));
	CHECK(write_out(at("made/sub/out//report.txt"), "text\n") == 0, "write over a hard link (// in path)");
	CHECK(same(at("victim"), SECRET) && !stat(at("victim"), &st) && st.st_nlink == 1,
	      "the hard link's other name unchanged, its link count back to 1");

	mkdir(at("made/sub/out/adir"), 0700);
	CHECK(write_out(at("made/sub/out/adir"), "x") == -EISDIR, "a directory at the name: EISDIR, kept");

	umask(0);
	CHECK(write_out(at("made/sub/out/umask.txt"), "x") == 0 &&
	      (mode_of(at("made/sub/out/umask.txt")) & 07777) == 0644,
	      "umask 000: the output is 0644 (got %o)", mode_of(at("made/sub/out/umask.txt")) & 07777);
	umask(022);
}

static void test_paths(void)
{
	CHECK(write_out(at("elsewhere.txt"), "x") == -EXDEV, "a path under no held DIR: EXDEV");
	CHECK(access(at("elsewhere.txt"), F_OK) != 0, "and nothing written there");
	CHECK(write_out(at("made/sub/out/../escape.txt"), "x") == -EXDEV, "'..' out of DIR: EXDEV");
	CHECK(write_out(at("made/sub/out"), "x") == -EXDEV, "DIR itself is no file name: EXDEV");
	CHECK(write_out(at("made/sub/outx/a"), "x") == -EXDEV, "a sibling sharing DIR's prefix: EXDEV");

	CHECK(pt_out_mkdir(at("made/sub/out/run-0-baseline")) == 0, "a sub-directory made");
	CHECK((mode_of(at("made/sub/out/run-0-baseline")) & 07777) == 0700, "0700");
	put(at("victim"), SECRET, 0600);
	symlink(at("victim"), at("made/sub/out/run-0-baseline/untraced-1.log"));
	CHECK(write_out(at("made/sub/out/run-0-baseline/untraced-1.log"), "log\n") == 0 &&
	      same(at("victim"), SECRET), "a link planted in the sub-directory replaced, not followed");

	mkdir(at("elsewhere"), 0700);
	symlink(at("elsewhere"), at("made/sub/out/linked"));
	CHECK(write_out(at("made/sub/out/linked/x"), "x") < 0 && access(at("elsewhere/x"), F_OK) != 0,
	      "a symlinked sub-directory not followed");
	CHECK(pt_out_mkdir(at("made/sub/out/linked")) < 0, "nor made through");

	CHECK(pt_out_unlink(at("made/sub/out/report.json")) == 0 &&
	      access(at("made/sub/out/report.json"), F_OK) != 0, "unlink through the held DIR");
}

static void test_user_file(void)
{
	int fd;

	put(at("victim"), SECRET, 0600);
	symlink(at("victim"), at("stats-link"));
	fd = pt_user_open(at("stats-link"));
	CHECK(fd < 0 && errno == ELOOP && same(at("victim"), SECRET),
	      "a user-named file that is a symlink: ELOOP, target unchanged");
	if (fd >= 0)
		close(fd);
	umask(0);
	fd = pt_user_open(at("stats.txt"));
	CHECK(fd >= 0 && (mode_of(at("stats.txt")) & 07777) == 0644, "a user-named file: 0644 under umask 000");
	if (fd >= 0)
		close(fd);
	umask(022);
}

static void test_refusals(void)
{
	mkdir(at("open"), 0777);
	chmod(at("open"), 0777);
	CHECK(pt_outdir_prepare(at("open")) == -EPERM, "root's DIR, mode 0777: refused");
	mkdir(at("group"), 0775);
	chmod(at("group"), 0775);
	CHECK(pt_outdir_prepare(at("group")) == -EPERM, "root's DIR, mode 0775: refused");
	CHECK(write_out(at("open/report.json"), "x") == -EXDEV, "a refused DIR is not held");

	if (geteuid() != 0)
		return;   /* the rest chowns to another user */
	mkdir(at("theirs"), 0755);
	chown(at("theirs"), NOBODY, NOBODY);
	put(at("victim"), SECRET, 0600);
	symlink(at("victim"), at("theirs/report.json"));
	CHECK(pt_outdir_prepare(at("theirs")) == -EPERM, "nobody's DIR: refused");

	mkdir(at("target"), 0700);
	symlink(at("target"), at("linkdir"));
	lchown(at("linkdir"), NOBODY, NOBODY);
	CHECK(pt_outdir_prepare(at("linkdir")) == -EPERM, "DIR a symlink owned by nobody: refused");
	symlink(at("target"), at("rootlink"));
	CHECK(pt_outdir_prepare(at("rootlink")) == 0 && write_out(at("rootlink/a"), "x") == 0 &&
	      same(at("target/a"), "x"), "DIR a symlink of root's own: followed (the caller's choice)");

	pt_outdir_set_trust(true);
	CHECK(pt_outdir_prepare(at("theirs")) == 0, "--trust-output-dir: nobody's DIR accepted");
	CHECK(write_out(at("theirs/report.json"), "{}\n") == 0 && same(at("victim"), SECRET) &&
	      S_ISREG(mode_of(at("theirs/report.json"))), "... and its planted link still not followed");
	CHECK(pt_outdir_prepare(at("linkdir")) == -EPERM && access(at("target/report.json"), F_OK),
	      "--trust-output-dir: DIR a symlink owned by nobody still refused");
	pt_outdir_set_trust(false);
}

int main(void)
{
	char cmd[300];

	snprintf(base, sizeof(base), "/tmp/pt-test-outdir.XXXXXX");
	if (!mkdtemp(base)) {
		perror("mkdtemp");
		return 1;
	}
	umask(022);
	test_create_and_links();
	test_paths();
	test_user_file();
	test_refusals();
	pt_outdir_release();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", base);
	if (system(cmd))
		fprintf(stderr, "could not remove %s\n", base);
	return CHECK_DONE();
}
