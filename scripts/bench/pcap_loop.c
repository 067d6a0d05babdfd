/* pcap_loop.c - the bare libpcap baseline for scripts/bench-pcap2spans.sh: reads every
 * packet of a capture (nanosecond timestamps, as pcap2spans asks for) and touches its
 * first and last captured byte so that the data is really read.  Prints the packet
 * count and a checksum. */
#include <pcap/pcap.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    char ebuf[PCAP_ERRBUF_SIZE];
    struct pcap_pkthdr *h;
    const u_char *d;
    unsigned long long n = 0, sum = 0;
    pcap_t *p;

    if (argc != 2) {
        fprintf(stderr, "usage: pcap_loop FILE\n");
        return 2;
    }
    p = pcap_open_offline_with_tstamp_precision(argv[1], PCAP_TSTAMP_PRECISION_NANO, ebuf);
    if (p == NULL) {
        fprintf(stderr, "pcap_loop: %s\n", ebuf);
        return 2;
    }
    while (pcap_next_ex(p, &h, &d) == 1) {
        n++;
        if (h->caplen)
            sum += d[0] + d[h->caplen - 1] + h->caplen;
    }
    printf("%llu packets, checksum %llu\n", n, sum);
    pcap_close(p);
    return 0;
}
