/*
 * replay.c - run the fuzz target over every file of a corpus, without
 * libFuzzer, so `make check` replays it under ASan/UBSan with gcc.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf;
	long n;

	if (!f)
		return -1;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = malloc((size_t)n + 1);
	if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n) {
		fclose(f);
		free(buf);
		return -1;
	}
	fclose(f);
	LLVMFuzzerTestOneInput(buf, (size_t)n);
	free(buf);
	return 0;
}

int main(int argc, char **argv)
{
	int i, count = 0;

	for (i = 1; i < argc; i++) {
		DIR *d = opendir(argv[i]);
		struct dirent *de;
		char path[4096];

		if (!d) {
			if (replay_file(argv[i]) < 0)
				return 1;
			count++;
			continue;
		}
		while ((de = readdir(d))) {
			if (de->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "%s/%s", argv[i], de->d_name);
			if (replay_file(path) < 0) {
				fprintf(stderr, "cannot read %s\n", path);
				closedir(d);
				return 1;
			}
			count++;
		}
		closedir(d);
	}
	printf("replayed %d inputs\n", count);
	return count ? 0 : 1;
}
