package format_test

import (
	"testing"

	"github.com/lnpdb/lnpdb/format"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// CheckBatch refuses what ApplyBatch refuses, with the same error, and
// applies nothing either way.
func TestCheckBatchAgreesWithApply(t *testing.T) {
	db, _ := openMini(t)
	for _, tc := range []struct {
		name string
		ups  []format.Update
		ok   bool
	}{
		{"valid", []format.Update{{Action: format.Add, TN: 2025550199, LRN: 2025569000, SPID: "3003"}, {Action: format.Delete, TN: 3122001234}}, true},
		{"unknown SPID", []format.Update{{Action: format.Add, TN: 2025550199, LRN: 2025569000, SPID: "ZZZZ"}}, false},
		{"unassigned code", []format.Update{{Action: format.Add, TN: 9995550100, LRN: 2025569000, SPID: "3003"}}, false},
		{"bad action", []format.Update{{Action: 'X', TN: 2025550199}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := db.CheckBatch(tc.ups)
			assert.Equal(t, 0, db.PendingUpdates(), "CheckBatch applies nothing")
			if tc.ok {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, format.ErrInvalidUpdate)
			_, aerr := db.ApplyBatch(tc.ups, "")
			require.Error(t, aerr)
			assert.Equal(t, aerr.Error(), err.Error())
		})
	}
	require.NoError(t, db.Close())
	require.ErrorIs(t, db.CheckBatch(nil), format.ErrClosed)
}
