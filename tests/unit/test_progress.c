/* Unit tests: lib/sf_progress (silent when disabled, rate-limited, erased at the end). */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sf_progress.h"
#include "tap.h"

int main(void)
{
    struct sf_progress p;
    char *buf = NULL;
    size_t len = 0;
    FILE *f;
    struct timespec quarter = {0, 300 * 1000 * 1000};

    sf_progress_start(&p, NULL, "x.pcap", "B", 1000);
    sf_progress_update(&p, 10);
    sf_progress_end(&p);
    TAP_OK(1, "a disabled progress (NULL stream) does nothing and does not crash");

    f = open_memstream(&buf, &len);
    sf_progress_start(&p, f, "x.pcap", "B", 100 * 1000 * 1000);
    sf_progress_update(&p, 1000);
    fflush(f);
    TAP_EQ_INT(len, 0, "no line before a quarter second has passed");
    nanosleep(&quarter, NULL);
    sf_progress_update(&p, 50 * 1000 * 1000);
    fflush(f);
    TAP_OK(len > 0 && strstr(buf, "x.pcap: 50.0 MB of 100.0 MB (50%)") != NULL,
           "a line with done, total and percent (%s)", buf ? buf : "");
    TAP_OK(strstr(buf, "MB/s") != NULL && strstr(buf, "s left") != NULL, "with rate and time left");
    size_t before = len;
    sf_progress_update(&p, 60 * 1000 * 1000);
    fflush(f);
    TAP_EQ_INT(len, before, "updates are rate-limited");
    sf_progress_end(&p);
    fflush(f);
    TAP_OK(len > before && strstr(buf + before, "\r\033[K") != NULL,
           "the line is erased at the end");
    fclose(f);
    free(buf);

    f = open_memstream(&buf, &len);
    sf_progress_start(&p, f, "-", "packets", 0);
    nanosleep(&quarter, NULL);
    sf_progress_update(&p, 1234);
    fclose(f);
    TAP_OK(strstr(buf, "-: 1234 packets") != NULL && strstr(buf, " of ") == NULL,
           "unknown total: count and rate only (%s)", buf);
    free(buf);
    return tap_done();
}
