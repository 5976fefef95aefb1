package linpart

import "github.com/anishathalye/porcupine"

// By returns a porcupine.Model Partition that groups operations by
// key(op.Input), the groups in the order their keys first appear and
// each group's operations in history order.
func By[K comparable](key func(input any) K) func([]porcupine.Operation) [][]porcupine.Operation {
	return func(history []porcupine.Operation) [][]porcupine.Operation {
		by := map[K][]porcupine.Operation{}
		var order []K
		for _, op := range history {
			k := key(op.Input)
			if _, ok := by[k]; !ok {
				order = append(order, k)
			}
			by[k] = append(by[k], op)
		}
		out := make([][]porcupine.Operation, 0, len(order))
		for _, k := range order {
			out = append(out, by[k])
		}
		return out
	}
}
