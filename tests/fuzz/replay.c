/*
 * replay.c - runs a libFuzzer target over its seed corpus without libFuzzer.
 *
 * A plain (gcc) build links every tests/fuzz/fuzz_*.c with this driver so that CTest feeds
 * each seed file to LLVMFuzzerTestOneInput under ASan+UBSan. Arguments are files or
 * directories; a directory is walked one level deep. An empty corpus is an error, so a
 * missing seed folder cannot pass silently.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        return -1;
    }
    uint8_t *buf = malloc(1 << 20);
    if (!buf) {
        fclose(f);
        return -1;
    }
    size_t n = fread(buf, 1, 1 << 20, f);
    fclose(f);
    LLVMFuzzerTestOneInput(buf, n);
    free(buf);
    return 0;
}

int main(int argc, char **argv)
{
    int runs = 0;
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) != 0) {
            perror(argv[i]);
            return 1;
        }
        if (!S_ISDIR(st.st_mode)) {
            if (run_file(argv[i]) == 0)
                runs++;
            continue;
        }
        DIR *d = opendir(argv[i]);
        if (!d)
            return 1;
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            if (e->d_name[0] == '.')
                continue;
            char path[4096];
            snprintf(path, sizeof(path), "%s/%s", argv[i], e->d_name);
            if (run_file(path) == 0)
                runs++;
        }
        closedir(d);
    }
    printf("replayed %d inputs\n", runs);
    return runs > 0 ? 0 : 1;
}
