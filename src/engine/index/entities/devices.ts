/** @module index/entities/devices Client devices by ID and by user. */
import type { Device } from "../../types.js";
import type { EntityIndex } from "./entity-index.js";

export class DeviceIndex implements EntityIndex<Device> {
  readonly byId = new Map<number, Device>();
  /** userId -> IDs of the user's devices (push candidates are found here, not among all users). */
  readonly byUser = new Map<number, Set<number>>();

  add(device: Device): void {
    this.byId.set(device.id, device);
    let mine = this.byUser.get(device.userId);
    if (!mine) this.byUser.set(device.userId, (mine = new Set()));
    mine.add(device.id);
  }

  remove(device: Device): void {
    this.byId.delete(device.id);
    const mine = this.byUser.get(device.userId);
    mine?.delete(device.id);
    if (mine?.size === 0) this.byUser.delete(device.userId);
  }

  clear(): void {
    this.byId.clear();
    this.byUser.clear();
  }
}
