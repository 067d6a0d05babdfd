/* h1.h - HTTP/1.1 (h1.c), above HTTP/2 (an accepted "Upgrade: h2c" hands over). */
#ifndef P2S_H1_H
#define P2S_H1_H

#include "conn.h"

extern const struct p2s_app_ops p2s_h1_ops;

#endif
