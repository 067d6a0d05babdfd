# pcap2spans: packet captures to spans (libpcap, libnghttp2 for HPACK, SQLite, libcrypto).
TOOLS += pcap2spans
LDLIBS_pcap2spans = $(call pc,libpcap libnghttp2 sqlite3 libcrypto) -pthread
