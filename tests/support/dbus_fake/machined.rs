//! The fake `org.freedesktop.machine1.Manager`: images by name, and a
//! machine `h-<n>` registered while a unit `*@h-<n>.service` is running (as
//! systemd-nspawn registers it), for `KillMachine`.

use zbus::interface;
use zbus::zvariant::OwnedObjectPath;

use super::state::{Shared, lock};

#[derive(Debug, zbus::DBusError)]
#[zbus(prefix = "org.freedesktop.machine1")]
pub enum MdError {
    #[zbus(error)]
    ZBus(zbus::Error),
    NoSuchImage(String),
    NoSuchMachine(String),
}

pub struct Machines {
    pub state: Shared,
}

#[interface(name = "org.freedesktop.machine1.Manager")]
impl Machines {
    async fn get_image(&self, name: String) -> Result<OwnedObjectPath, MdError> {
        if !lock(&self.state).images.contains(&name) {
            return Err(MdError::NoSuchImage(format!("No image '{name}' known")));
        }
        Ok(OwnedObjectPath::try_from(format!(
            "/org/freedesktop/machine1/image/{}",
            name.replace('-', "_2d")
        ))
        .unwrap())
    }

    async fn clone_image(
        &self,
        name: String,
        new_name: String,
        read_only: bool,
    ) -> Result<(), MdError> {
        let mut st = lock(&self.state);
        st.calls
            .push(format!("CloneImage {name} {new_name} {read_only}"));
        if !st.images.contains(&name) {
            return Err(MdError::NoSuchImage(format!("No image '{name}' known")));
        }
        st.images.insert(new_name);
        Ok(())
    }

    /// Records the call; refuses a machine no running unit registers.
    /// What the signal does to the container is the real systemd's to
    /// show (the test-bed), so the units are left as they are.
    async fn kill_machine(&self, name: String, who: String, signal: i32) -> Result<(), MdError> {
        let mut st = lock(&self.state);
        st.calls.push(format!("KillMachine {name} {who} {signal}"));
        let suffix = format!("@{name}.service");
        let registered = st
            .units
            .iter()
            .any(|(unit, u)| unit.ends_with(&suffix) && u.active == "active");
        if !registered {
            return Err(MdError::NoSuchMachine(format!("No machine '{name}' known")));
        }
        Ok(())
    }

    async fn remove_image(&self, name: String) -> Result<(), MdError> {
        let mut st = lock(&self.state);
        st.calls.push(format!("RemoveImage {name}"));
        if !st.images.remove(&name) {
            return Err(MdError::NoSuchImage(format!("No image '{name}' known")));
        }
        Ok(())
    }
}
