// Package trust scores how far a call from a US number can be trusted
// (CONTRACT §5), from complaint data and from signs of a recent port.
//
//	r, err := trust.Lookup(db, "12025550123", trust.Options{})
//	fmt.Println(r.Score, r.Level, r.Reasons)
//
// # Score
//
// This is the first version of the score; a change to it is a change to its
// tests. A score starts at 100 and loses, in this order, each deduction that
// applies; every deduction adds its reason code to Result.Reasons:
//
//	deduction                                           points  reason
//	spam type SCAM                                        −60   SPAM_TYPE_SCAM
//	spam type ROBOCALL                                    −50   SPAM_TYPE_ROBOCALL
//	spam type SPAM                                        −40   SPAM_TYPE_SPAM
//	spam type TELEMARKETER                                −25   SPAM_TYPE_TELEMARKETER
//	complaints: 3 each, at most 30                    −3…−30   COMPLAINTS
//	ported within the last 7 days                         −20   PORTED_7D
//	  else ported within the last 30 days                 −10   PORTED_30D
//	not ported, its pooled block activated within
//	  the last 7 days                                     −20   POOLED_7D
//	  else within the last 30 days                        −10   POOLED_30D
//	the current carrier's type is VOIP                    −10   VOIP_CARRIER
//
// A recent port or block activation is the risk window of port-out fraud and
// SIM swaps. "Within the last N days" means the activation time is at most
// N×24 hours before Options.Now and not after it; an unknown activation time
// counts as old. The current carrier is the ported record's SPID, else the
// holder of the number's most specific block row.
//
// The score is then clamped to 0–100, and its level is high (70 and above),
// medium (40–69) or low (below 40). A number without complaint data has
// spam type NONE and no complaints. A vacant number (not ported, NPA-NXX
// code not assigned) is [ErrNotFound] as in every lookup.
//
// Every function is safe for concurrent use.
package trust
