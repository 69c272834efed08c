package profile

import "slices"

// Clone returns a deep copy of p: changing or sorting the copy (Encode and
// Save sort) leaves p alone, so one profile of the moment can be handed to
// several readers at once.
func (p *Profile) Clone() *Profile {
	if p == nil {
		return nil
	}
	c := *p
	c.Args = slices.Clone(p.Args)
	c.Lines = slices.Clone(p.Lines)
	c.Functions = slices.Clone(p.Functions)
	c.Sites = slices.Clone(p.Sites)
	c.Dropped = slices.Clone(p.Dropped)
	c.Notes = slices.Clone(p.Notes)
	c.Modules = slices.Clone(p.Modules)
	c.Blocks = slices.Clone(p.Blocks)
	c.Edges = slices.Clone(p.Edges)
	c.Branches = slices.Clone(p.Branches)
	c.Calls = slices.Clone(p.Calls)
	c.Arcs = slices.Clone(p.Arcs)
	c.Samples = slices.Clone(p.Samples)
	c.Stacks = cloneStacks(p.Stacks)
	c.Instances = cloneInstances(p.Instances)
	c.Sources = slices.Clone(p.Sources)
	c.Time = clonePtr(p.Time)
	c.Exit.Code = clonePtr(p.Exit.Code)
	c.Exit.FaultAddress = clonePtr(p.Exit.FaultAddress)
	c.Exit.PC = clonePtr(p.Exit.PC)
	return &c
}

func clonePtr[T any](v *T) *T {
	if v == nil {
		return nil
	}
	c := *v
	return &c
}
