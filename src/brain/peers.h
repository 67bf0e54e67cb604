/*
 * peers.h - silent laggards, hot parts and throttled parts: each loaded GPU against its
 * same-SKU peers with robust statistics (median and MAD), on each tick, counted per new sample
 * so that a GPU must stay out of line for laggard-cycles samples.
 */
#ifndef HN_BRAIN_PEERS_H
#define HN_BRAIN_PEERS_H

#include "brain/state.h"

/* Evaluates every loaded GPU against its same-SKU peers, each SKU once, in node order. */
void hb_peers_tick(struct hn_brain *b, double now);

#endif
