package admission

// SeatsLeft tells how many seats the inventory linked to an event has
// left, as the engine's Inventory reports it now (the controller reads
// the same at each tick). known is false when the event has no linked
// inventory, the engine none, or the inventory cannot tell.
func (e *Engine) SeatsLeft(id string) (remaining int, known bool) {
	ev, err := e.event(id)
	if err != nil || e.opts.Inventory == nil {
		return 0, false
	}
	inv := ev.conf().InventoryEvent
	if inv == "" {
		return 0, false
	}
	return e.opts.Inventory.Remaining(inv)
}
